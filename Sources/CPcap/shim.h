#include <pcap/pcap.h>
#include <stdio.h>
#include <sys/types.h>

#if defined(__linux__)
/* glibc's fopencookie is declared only under _GNU_SOURCE, which a module header cannot switch on
   for the already-built system module. Declare it under our own name with glibc's layout of
   cookie_io_functions_t, so libpcap can read a capture through zlib (gzip captures, stdin). */
typedef struct {
    ssize_t (*read)(void *cookie, char *buffer, size_t size);
    ssize_t (*write)(void *cookie, const char *buffer, size_t size);
    int (*seek)(void *cookie, long long *offset, int whence);
    int (*close)(void *cookie);
} traffic_cookie_io_functions;
extern FILE *traffic_fopencookie(void *cookie, const char *mode, traffic_cookie_io_functions functions)
    __asm__("fopencookie");

/* <stdio_ext.h>: FSETLOCKING_BYCALLER (2) stops stdio from locking the stream around every call. */
extern int traffic_fsetlocking(FILE *stream, int type) __asm__("__fsetlocking");
#endif
