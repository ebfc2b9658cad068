/* SPDX-License-Identifier: MIT */
/*
 * --watch-output on a terminal: the command writes to a pseudo-terminal
 * lgrun reads (so it still sees a terminal: colours, sizes, line
 * buffering), and lgrun's own terminal is put in raw mode to relay the
 * keys typed to it (Ctrl-C reaches the command as it would).
 */
#ifndef LG_PTY_H
#define LG_PTY_H

#include <stdbool.h>
#include <termios.h>

/*
 * A new pseudo-terminal with the modes of the terminal `like` and the size
 * of `size_of`: 0, or -errno. Both ends close on exec.
 */
int lg_pty_open(int like, int size_of, int *master, int *slave);
/* The window of size_of changed: the pty follows (SIGWINCH to its group). */
void lg_pty_resize(int master, int size_of);

/* Raw (no echo, no line editing, keys as bytes, output as is). */
int lg_tty_raw(int fd, struct termios *saved);
void lg_tty_restore(int fd, const struct termios *saved);

#endif
