/* Host stand-in for <zephyr/logging/log.h>: see ../../README.md. */
#ifndef ZTEST_HOST_LOG_H_
#define ZTEST_HOST_LOG_H_

#include "zephyr/sys/printk.h"

#define LOG_MODULE_REGISTER(name, level) static const int log_level_##name __attribute__((unused)) = (level)
#define LOG_ERR(...) printk(__VA_ARGS__)
#define LOG_INF(...) printk(__VA_ARGS__)

#endif
