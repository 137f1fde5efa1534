/* Host stand-in for <zephyr/sys/printk.h>: see ../../README.md. */
#ifndef ZTEST_HOST_PRINTK_H_
#define ZTEST_HOST_PRINTK_H_

#include <stdarg.h>
#include <stddef.h>

void printk(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int vsnprintk(char* str, size_t size, const char* fmt, va_list ap);
void vprintk(const char* fmt, va_list ap);

#endif
