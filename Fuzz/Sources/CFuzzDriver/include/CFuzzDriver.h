#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry point for programs that own `main` (compiler-rt FuzzerInterface.h). SwiftPM
// gives every executable a renamed Swift `main`, which hides libFuzzer's own, so ours calls this.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
