// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "pty.h"

int lg_pty_open(int like, int size_of, int *master, int *slave)
{
	char name[128];
	struct termios t;
	struct winsize ws;
	LG_AUTOCLOSE int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	int s;

	if (m < 0)
		return -errno;
	if (grantpt(m) < 0 || unlockpt(m) < 0 ||
	    ptsname_r(m, name, sizeof(name)) != 0)
		return -errno;
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return -errno;
	if (tcgetattr(like, &t) == 0)
		tcsetattr(s, TCSANOW, &t);
	if (ioctl(size_of, TIOCGWINSZ, &ws) == 0)
		ioctl(m, TIOCSWINSZ, &ws);
	*master = lg_steal_fd(&m);
	*slave = s;
	return 0;
}

void lg_pty_resize(int master, int size_of)
{
	struct winsize ws;

	if (ioctl(size_of, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
}

int lg_tty_raw(int fd, struct termios *saved)
{
	struct termios t;

	if (tcgetattr(fd, saved) < 0)
		return -errno;
	t = *saved;
	t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR |
				 IGNCR | ICRNL | IXON);
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
	t.c_cflag |= CS8;
	/*
	 * Output as is: the pty already did what the command's own modes ask
	 * (a curses program's bare line feeds stay bare). lgrun's messages
	 * meanwhile end in CR LF (lg_log_crlf).
	 */
	t.c_oflag &= ~(tcflag_t)OPOST;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSAFLUSH, &t) < 0)
		return -errno;
	return 0;
}

void lg_tty_restore(int fd, const struct termios *saved)
{
	tcsetattr(fd, TCSAFLUSH, saved);
}
