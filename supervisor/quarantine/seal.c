// SPDX-License-Identifier: MIT
/*
 * The index sealed (issue 39 item 12): a root tree can undo the read-only
 * bind over lgrun's state and append a line to its quarantine index, which
 * a later restore as root would believe. So:
 *
 * - each line lgrun writes carries "mac": the HMAC-SHA256, with a key of
 *   this run that lives only in lgrun's memory (and its watchdog's, forked
 *   after it was made; never written), of the SHA-256 of the line's bytes
 *   before it (its digest: one hash of the line, which lgrun remembers);
 * - at the run's end, the tree gone, lgrun writes the digests of the
 *   lines it made (its watchdog, after a crash, reads the index back and
 *   keeps the lines whose mac verifies) as this run's line of
 *   STATE_DIR/quarantine/SESSION.runs, by write-then-rename: the earlier
 *   runs' lines as read at this run's start (before the tree ran), then
 *   this run's, so what the tree wrote into that file meanwhile is gone;
 * - lgctl restore believes a line only when its digest is sealed there.
 *
 * No key is ever on disk: a later run's tree learns nothing that would
 * let it sign a line of an earlier run.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/sha.h"
#include "seal.h"

#define PRIOR_MAX (64u << 20) /* the earlier runs' seals read at most */

static struct {
	bool on;
	uint8_t key[32];
	char index[PATH_MAX + 256], runs[PATH_MAX + 256];
	char *prior; /* SESSION.runs as it was at this run's start */
	size_t nprior;
	int64_t start_ns;
	bool sealed, lost;
	/* the digests of the lines this process made (lgrun's; not the
	 * watchdog's, which reads the index back) */
	pthread_mutex_t lock;
	uint8_t (*mine)[16];
	size_t nmine, capmine;
} seal = { .lock = PTHREAD_MUTEX_INITIALIZER };

int lg_seal_init(const char *state_dir, const char *session)
{
	LG_AUTOCLOSE int fd = -1;
	struct stat st;

	if (getrandom(seal.key, sizeof(seal.key), 0) != sizeof(seal.key))
		return -errno;
	snprintf(seal.index, sizeof(seal.index), "%s/quarantine/%s.jsonl",
		 state_dir, session);
	snprintf(seal.runs, sizeof(seal.runs), "%s/quarantine/%s.runs",
		 state_dir, session);
	fd = open(seal.runs, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > 0 && (uint64_t)st.st_size <= PRIOR_MAX) {
		seal.prior = malloc((size_t)st.st_size + 1);
		if (seal.prior &&
		    pread(fd, seal.prior, (size_t)st.st_size, 0) == st.st_size)
			seal.nprior = (size_t)st.st_size;
	}
	/* a last line cut short (a crash while it was written): dropped */
	while (seal.nprior && seal.prior[seal.nprior - 1] != '\n')
		seal.nprior--;
	seal.on = true;
	return 0;
}

void lg_seal_start(int64_t start_ns)
{
	seal.start_ns = start_ns;
}

static void sha_of(const char *line, size_t n, uint8_t d[32])
{
	struct lg_sha x;

	lg_sha_init(&x, true);
	lg_sha_update(&x, line, n);
	lg_sha_final(&x, d);
}

/* The mac of a line whose digest is d: HMAC of 16 bytes, cheap. */
static void mac_of_digest(const uint8_t d[32], char hex[65])
{
	uint8_t m[32];

	lg_hmac_sha256(seal.key, sizeof(seal.key), d, 16, m);
	lg_hex(m, sizeof(m), hex);
}

bool lg_seal_on(void)
{
	return seal.on;
}

void lg_seal_mac(const char *line, size_t n, char hex[65])
{
	uint8_t d[32];

	sha_of(line, n, d);
	mac_of_digest(d, hex);
	pthread_mutex_lock(&seal.lock);
	if (seal.nmine == seal.capmine) {
		size_t cap = seal.capmine ? 2 * seal.capmine : 1024;
		uint8_t(*m)[16] = realloc(seal.mine, cap * sizeof(*m));

		if (m) {
			seal.mine = m;
			seal.capmine = cap;
		}
	}
	if (seal.nmine < seal.capmine)
		memcpy(seal.mine[seal.nmine++], d, 16);
	else
		seal.lost = true; /* out of memory: the end reads back */
	pthread_mutex_unlock(&seal.lock);
}

void lg_seal_digest(const char *line, size_t n, char hex[33])
{
	size_t at = lg_seal_signed_part(line, n);
	uint8_t d[32];

	sha_of(line, at ? at : n, d); /* a signed line: its signed part */
	lg_hex(d, 16, hex);
}

/*
 * line (its newline cut) ends with ,"mac":"<64 hex>"} over the bytes
 * before ",\"mac\"": where that is, or 0 when it does not.
 */
size_t lg_seal_signed_part(const char *line, size_t n)
{
	static const char tag[] = ",\"mac\":\"";
	size_t t = sizeof(tag) - 1;

	if (n < t + 64 + 2 || line[n - 1] != '}' || line[n - 2] != '"' ||
	    memcmp(line + n - 2 - 64 - t, tag, t) != 0)
		return 0;
	return n - 2 - 64 - t;
}

/* Was line (no newline) signed with this run's key? Its digest into d. */
static bool ours(const char *line, size_t n, uint8_t d[32])
{
	size_t at = lg_seal_signed_part(line, n);
	char hex[65];

	if (!at)
		return false;
	sha_of(line, at, d);
	mac_of_digest(d, hex);
	return memcmp(hex, line + at + 8, 64) == 0;
}

int lg_seal_write(int64_t end_ns)
{
	LG_AUTOFCLOSE FILE *in = NULL, *out = NULL;
	char tmp[PATH_MAX + 300], *line = NULL;
	size_t cap = 0, kept = 0;
	ssize_t n;
	int fd, e = 0;

	if (!seal.on || seal.sealed)
		return 0;
	in = fopen(seal.index, "re");
	if (!in && errno != ENOENT)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp", seal.runs);
	unlink(tmp); /* a dead lgrun's, or planted */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	out = fdopen(fd, "we");
	if (!out) {
		close(fd);
		unlink(tmp);
		return -errno;
	}
	if (seal.nprior)
		fwrite(seal.prior, 1, seal.nprior, out);
	fprintf(out, "{\"start_ns\":%lld,\"end_ns\":%lld,\"lines\":[",
		(long long)seal.start_ns, (long long)end_ns);
	if (seal.nmine && !seal.lost) {
		/* lgrun: the lines it made itself, no reading back */
		for (size_t i = 0; i < seal.nmine; i++) {
			char d[33];

			lg_hex(seal.mine[i], 16, d);
			fprintf(out, "%s\"%s\"", kept++ ? "," : "", d);
		}
		if (in)
			fclose(in);
		in = NULL;
	}
	while (in && (n = getline(&line, &cap, in)) > 0) {
		uint8_t dd[32];
		char d[33];

		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (!ours(line, (size_t)n, dd))
			continue; /* another run's, or the tree's */
		lg_hex(dd, 16, d);
		fprintf(out, "%s\"%s\"", kept++ ? "," : "", d);
	}
	free(line);
	fputs("]}\n", out);
	if (!kept && fflush(out) == 0) /* this run's line: none */
		e = ftruncate(fileno(out), (off_t)seal.nprior) < 0 ? -errno : 0;
	if (!e && (fflush(out) != 0 || fsync(fileno(out)) < 0))
		e = -errno;
	/*
	 * Always: what the tree wrote into SESSION.runs meanwhile is gone
	 * (a run that kept nothing leaves it as it was at its start, or none)
	 */
	if (!e && (kept || seal.nprior) && rename(tmp, seal.runs) < 0)
		e = -errno;
	if (!e && !kept && !seal.nprior && unlink(seal.runs) < 0 &&
	    errno != ENOENT)
		e = -errno;
	if (e || (!kept && !seal.nprior))
		unlink(tmp);
	seal.sealed = !e;
	return e;
}
