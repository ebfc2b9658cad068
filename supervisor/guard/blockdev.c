// SPDX-License-Identifier: MIT
/*
 * What a block device's head says it holds (lg_blockdev_holds): the
 * signatures blkid finds first, read at their offsets; pure.
 */
#include <stdint.h>
#include <string.h>

#include "classify.h"

static bool at(const unsigned char *h, size_t n, size_t off, const void *magic,
	       size_t len)
{
	return off + len <= n && memcmp(h + off, magic, len) == 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* ext2/3/4: the superblock at 1024, its magic 0xEF53 at 1080. */
static const char *ext(const unsigned char *h, size_t n)
{
	uint32_t compat, incompat;

	if (!at(h, n, 1080, "\x53\xef", 2) || n < 1024 + 0x68)
		return NULL;
	compat = le32(h + 1024 + 0x5c);
	incompat = le32(h + 1024 + 0x60);
	if (incompat & (0x40 | 0x80 | 0x200)) /* extents, 64bit, flex_bg */
		return "an ext4 filesystem";
	if (compat & 0x4) /* has_journal */
		return "an ext3 filesystem";
	return "an ext2 filesystem";
}

/* An MBR: 0x55AA at 510 and a partition entry with a type. */
static bool mbr(const unsigned char *h, size_t n)
{
	if (!at(h, n, 510, "\x55\xaa", 2))
		return false;
	for (int i = 0; i < 4; i++) {
		const unsigned char *e = h + 446 + 16 * i;

		/* boot flag 0 or 0x80, a type, a length */
		if ((e[0] == 0 || e[0] == 0x80) && e[4] != 0 &&
		    le32(e + 12) != 0)
			return true;
	}
	return false;
}

const char *lg_blockdev_holds(const unsigned char *h, size_t n)
{
	static const size_t pages[] = { 4096, 8192, 16384, 65536 };
	const char *e = ext(h, n);

	if (e)
		return e;
	if (at(h, n, 0, "XFSB", 4))
		return "an XFS filesystem";
	if (at(h, n, 0x10040, "_BHRfS_M", 8))
		return "a btrfs filesystem";
	if (at(h, n, 0, "LUKS\xba\xbe", 6))
		return "a LUKS volume";
	if (at(h, n, 512, "LABELONE", 8) || at(h, n, 0, "LABELONE", 8))
		return "an LVM physical volume";
	if (at(h, n, 0, "\xfc\x4e\x2b\xa9", 4) ||
	    at(h, n, 4096, "\xfc\x4e\x2b\xa9", 4))
		return "an md RAID member";
	if (at(h, n, 1024, "\x10\x20\xf5\xf2", 4))
		return "an F2FS filesystem";
	if (at(h, n, 1024, "\xe2\xe1\xf5\xe0", 4))
		return "an EROFS filesystem";
	if (at(h, n, 0, "hsqs", 4))
		return "a squashfs filesystem";
	if (at(h, n, 0x8001, "CD001", 5))
		return "an ISO 9660 filesystem";
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (at(h, n, pages[i] - 10, "SWAPSPACE2", 10) ||
		    at(h, n, pages[i] - 10, "SWAP-SPACE", 10))
			return "a swap area";
	if (at(h, n, 512, "EFI PART", 8) || at(h, n, 4096, "EFI PART", 8))
		return "a GPT partition table";
	if (at(h, n, 3, "NTFS    ", 8))
		return "an NTFS filesystem";
	if (at(h, n, 3, "EXFAT   ", 8))
		return "an exFAT filesystem";
	if (at(h, n, 82, "FAT32   ", 8) || at(h, n, 54, "FAT16   ", 8) ||
	    at(h, n, 54, "FAT12   ", 8))
		return "a FAT filesystem";
	if (mbr(h, n))
		return "an MBR partition table";
	for (size_t i = 0; i < n; i++)
		if (h[i])
			return "data lgrun does not recognise";
	return NULL;
}
