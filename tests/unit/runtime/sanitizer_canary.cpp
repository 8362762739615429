// A program with one deliberate bug per sanitizer, built only in sanitizer builds
// (scripts/sanitize.sh). The sanitizer.canary.* tests run it and require the sanitizer to report
// the bug and fail the process: proof that the sanitizer runs are armed (instrumented, and a
// report fails the test instead of scrolling by), so a clean run means something.
//   sanitizer_canary heap-overflow     AddressSanitizer: heap-buffer-overflow
//   sanitizer_canary signed-overflow   UndefinedBehaviorSanitizer: signed integer overflow
//   sanitizer_canary race              ThreadSanitizer: data race
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {

int shared_counter = 0;  // written by two threads without synchronisation (the "race" bug)

int heap_overflow(int argc) {
  int* p = new int[4];
  const int i = 3 + argc;  // 4: one past the end, not known at compile time
  const int v = p[i];
  delete[] p;
  return v;
}

int signed_overflow(int argc) {
  const int big = INT_MAX - 1 + argc;  // INT_MAX
  return big + argc;                   // overflows
}

int race() {
  std::thread a([] {
    for (int i = 0; i < 100000; ++i) ++shared_counter;
  });
  std::thread b([] {
    for (int i = 0; i < 100000; ++i) ++shared_counter;
  });
  a.join();
  b.join();
  return shared_counter == 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sanitizer_canary heap-overflow|signed-overflow|race\n");
    return 2;
  }
  const char* what = argv[1];
  int r = 0;
  if (std::strcmp(what, "heap-overflow") == 0) r = heap_overflow(argc - 1);
  else if (std::strcmp(what, "signed-overflow") == 0) r = signed_overflow(argc - 1);
  else if (std::strcmp(what, "race") == 0) r = race();
  else return 2;
  std::printf("the %s bug went unreported (result %d)\n", what, r);
  return 0;
}
