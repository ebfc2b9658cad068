// SPDX-License-Identifier: MIT
/*
 * A block device the tree opens for writing (mkfs, dd of=, wipefs): what
 * it holds, read by lgrun through the tree's view of its path before the
 * open runs (notify_probe_device). Its head against the signatures blkid
 * finds first (lg_blockdev_holds, pure), else whether it is mounted (in
 * the target's mount namespace, then lgrun's) or held by another device
 * (device-mapper, md, LVM). Only an open for writing of a block device
 * pays for it: an ordinary open is stat'ed as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/log.h"
#include "notify_int.h"

/* Is rdev the device of a mount in the mount table at path? */
static bool in_mountinfo(const char *path, uint64_t rdev)
{
	LG_AUTOFCLOSE FILE *f = fopen(path, "re");
	LG_AUTOFREE char *line = NULL;
	size_t cap = 0;

	if (!f)
		return false;
	/* "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw" */
	while (getline(&line, &cap, f) > 0) {
		char src[PATH_MAX], *sep;
		unsigned maj, min;
		struct stat st;

		if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2)
			continue;
		if (makedev(maj, min) == rdev)
			return true;
		/* btrfs shows an anonymous device (0:N): its source then */
		if (maj == 0 && (sep = strstr(line, " - ")) &&
		    sscanf(sep + 3, "%*s %4095s", src) == 1 && src[0] == '/' &&
		    stat(src, &st) == 0 && S_ISBLK(st.st_mode) &&
		    st.st_rdev == rdev)
			return true;
	}
	return false;
}

/* Does another device hold it (/sys/dev/block/MAJ:MIN/holders)? */
static bool held(uint64_t rdev)
{
	char p[96];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/holders", major(rdev),
		 minor(rdev));
	d = opendir(p);
	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		found = e->d_name[0] != '.';
	closedir(d);
	return found;
}

void notify_probe_device(pid_t pid, const struct lg_where *w,
			 struct lg_facts *f)
{
	LG_AUTOCLOSE int fd = lg_where_open(w, O_RDONLY | O_NOCTTY);
	LG_AUTOFREE unsigned char *head = NULL;
	const char *holds;
	bool failed = false;
	size_t n = 0;
	char p[64];

	if (fd < 0) {
		/*
		 * The tree's open fails the same way (ENXIO: a loop device
		 * with no file behind it; ENOMEDIUM)
		 */
		lg_dbg("%s: a block device lgrun cannot read (%s): not judged",
		       w->path, strerror(-fd));
		return;
	}
#ifdef BLKGETDISKSEQ
	{
		__u64 seq;

		if (ioctl(fd, BLKGETDISKSEQ, &seq) == 0)
			f->blockdev_seq = seq;
	}
#endif
	head = malloc(LG_BLOCKDEV_HEAD);
	while (head && n < LG_BLOCKDEV_HEAD) {
		ssize_t r = pread(fd, head + n, LG_BLOCKDEV_HEAD - n, (off_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			lg_dbg("%s: reading the device: %s", w->path,
			       strerror(errno));
			failed = true;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	/* what cannot be read is taken as data: the safe side */
	holds = head && !(failed && !n) ? lg_blockdev_holds(head, n) :
					  "data lgrun could not read";
	/* all zeros, or bytes of no known kind: mounted or held says more */
	if (!holds || strncmp(holds, "data", 4) == 0) {
		snprintf(p, sizeof(p), "/proc/%d/mountinfo", pid);
		if (in_mountinfo(p, f->rdev) ||
		    in_mountinfo("/proc/self/mountinfo", f->rdev))
			holds = "a mounted filesystem";
		else if (held(f->rdev))
			holds = "a device another one uses (device-mapper, md, LVM)";
	}
	f->blockdev_holds = holds;
	f->blockdev_data = holds != NULL;
	/*
	 * A device of no size (a loop device with no file yet: losetup
	 * opens it for writing to attach one) holds nothing now, and is not
	 * remembered as the session's: what is attached next is judged
	 */
	f->blockdev_probed = n || failed || !head;
	lg_dbg("%s: a block device (%u:%u), %zu bytes of its head read: %s",
	       w->path, major(f->rdev), minor(f->rdev), n,
	       holds ? holds : "empty");
}
