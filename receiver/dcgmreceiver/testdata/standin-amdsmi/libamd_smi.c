/*
 * A stand-in libamd_smi.so for tests on machines without AMD GPUs. It is
 * compiled against AMD's own amdsmi.h, so that every function has the
 * signature and every structure the layout the real library's have, and the
 * receiver's cgo layer runs unchanged against it: the AMD SMI 25.x header
 * the backend is built with (internal/amdsmibackend/include), or the 26.x
 * one (internal/amdsmistandin/include26), whose structures differ.
 *
 * Its state is a text file named by STANDIN_AMDSMI_STATE, read again
 * whenever it changed, at initialisation and at each reading of the first
 * GPU's activity, one directive a line:
 *
 *   version MAJOR MINOR RELEASE     amdsmi_get_lib_version (default the
 *                                   header's version)
 *   init_fail STATUS                amdsmi_init fails with STATUS
 *   cper_page N                     CPER records per page (default 4)
 *   more_data STATUS                the status that says another CPER page
 *                                   follows (default the header's
 *                                   AMDSMI_STATUS_MORE_DATA; 57 in the 25.x
 *                                   libraries AMD released)
 *   metrics_xcp_stride N            amdsmi_gpu_metrics_t's xcp_stats entries
 *                                   are N bytes apart (default: as in the
 *                                   version's layout, see layout_of)
 *   link_stride N                   amdsmi_link_metrics_t's links are N
 *                                   bytes apart (default: likewise)
 *   gpu KIND UUID BDF COMPUTE MEMORY PARTITIONS LOAD
 *                                   a GPU: KIND mi300x or mi250; COMPUTE and
 *                                   MEMORY its partition modes (- for none);
 *                                   PARTITIONS processors it shows; LOAD its
 *                                   graphics activity in percent
 *   gone G                          GPU G's calls answer NOT_FOUND
 *   xcp_load G X LOAD               the XCCs of GPU G's compute partition
 *                                   (XCP) X are LOAD percent busy (default:
 *                                   the GPU's LOAD)
 *   xcc_busy G X C VALUE            XCC C of GPU G's XCP X reads VALUE in
 *                                   the metrics table, as is (4294967295 is
 *                                   the firmware's "not available")
 *   ecc G BLOCK CE UE DE            GPU G's ECC counts of RAS block BLOCK
 *   bad_page G STATUS               a retired page of GPU G (0 reserved,
 *                                   1 pending, 2 unreservable)
 *   cper G SEVERITY AFID...         a CPER record in GPU G's log
 *   fail CALL G STATUS              CALL fails on GPU G's processors
 *   proc G P PID VRAM GFX STEP [ENC]
 *                                   a process on GPU G's processor P:
 *                                   VRAM bytes, its graphics engine time
 *                                   GFX ns, growing by STEP ns (and the
 *                                   encoder's by ENC ns) at each listing
 *
 * A processor without proc lines shows one process while its GPU's LOAD
 * is above zero: VRAM held and no engine time, as AMD SMI reports a ROCm
 * compute process, whose queues bypass the DRM scheduler that the fdinfo
 * engine times count.
 * Board-level figures (power, energy, temperatures, clocks, violations,
 * ECC, retired pages, links, PCIe, CPER) are the first partition's only,
 * as on MI300X in CPX mode; amdsmi_get_gpu_activity too, which answers for
 * the whole GPU. Each partition's graphics activity is in the GPU's metrics
 * table (amdsmi_get_gpu_metrics_info, the same table on every partition):
 * one entry per XCC of each XCP, an MI300X's eight XCCs shared out among
 * its partitions. Cumulative counters (energy, XGMI traffic) advance by a
 * fixed step per read, and start anew with each state file, so that a
 * test's figures are reproducible.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "amd_smi/amdsmi.h"

#define MAX_GPUS 64
#define MAX_PART 8
#define MAX_ECC 32
#define MAX_CPER 256
#define MAX_FAIL 32
#define MAX_BAD 64
#define MAX_XCC 8

typedef struct {
	char kind[16], uuid[40], bdf[16], compute[8], memory[8];
	int partitions, load, gone;
	int xcp_load[MAX_PART];
	int xcc_set[MAX_PART][MAX_XCC];
	uint32_t xcc[MAX_PART][MAX_XCC];
	uint64_t energy_reads[MAX_PART], link_reads;
} gpu_t;

typedef struct { int gpu; char block[16]; uint64_t ce, ue, de; } ecc_t;
typedef struct { int gpu, severity, nafid; uint64_t afid[MAX_NUMBER_OF_AFIDS_PER_RECORD]; } cper_t;
typedef struct { char call[64]; int gpu, status; } fail_t;
typedef struct { int gpu, status; } bad_t;

static struct {
	int major, minor, release, init_fail, cper_page, more_data;
	// xcp_stride and link_stride, where not 0, replace the strides of
	// the version's layout (layout_of).
	int xcp_stride, link_stride;
	int ngpu, necc, ncper, nfail, nbad;
	gpu_t gpu[MAX_GPUS];
	ecc_t ecc[MAX_ECC];
	cper_t cper[MAX_CPER];
	fail_t fail[MAX_FAIL];
	bad_t bad[MAX_BAD];
} st;

static char loaded_path[4096];
static struct timespec loaded_mtime;
static off_t loaded_size = -1;
static ino_t loaded_ino;

// The processes of proc lines, apart from the rest of the state. A
// process's listings carry over to the same line of the next state of the
// same file, so that its engine time keeps growing; a line with another
// PID or starting time is another process.
#define MAX_PROCS 256

typedef struct {
	int gpu, part;
	uint32_t pid;
	uint64_t vram, gfx, step, enc_step, listings;
} proc_t;

static struct {
	int n;
	proc_t p[MAX_PROCS];
} procs, procs_before;

static void procs_begin(int same_file) {
	procs_before = procs;
	if (!same_file) procs_before.n = 0;
	procs.n = 0;
}

static void procs_line(const char *rest) {
	if (procs.n >= MAX_PROCS) return;
	proc_t *p = &procs.p[procs.n];
	memset(p, 0, sizeof(*p));
	int n = sscanf(rest, "%d %d %u %lu %lu %lu %lu", &p->gpu, &p->part, &p->pid, &p->vram, &p->gfx, &p->step, &p->enc_step);
	if (n < 6) return;
	for (int i = 0; i < procs_before.n; i++) {
		const proc_t *o = &procs_before.p[i];
		if (o->gpu == p->gpu && o->part == p->part && o->pid == p->pid && o->gfx == p->gfx) p->listings = o->listings;
	}
	procs.n++;
}

// parse reads a state file. The cumulative counters carry over from the
// previous state of the same file, and start anew with another file.
static void parse(FILE *fp, int same_file) {
	uint64_t keep[MAX_GPUS][MAX_PART + 1];
	memset(keep, 0, sizeof(keep));
	for (int g = 0; same_file && g < MAX_GPUS; g++) {
		for (int p = 0; p < MAX_PART; p++) keep[g][p] = st.gpu[g].energy_reads[p];
		keep[g][MAX_PART] = st.gpu[g].link_reads;
	}
	procs_begin(same_file);
	memset(&st, 0, sizeof(st));
	st.major = AMDSMI_LIB_VERSION_MAJOR; st.minor = AMDSMI_LIB_VERSION_MINOR; st.release = AMDSMI_LIB_VERSION_RELEASE;
	st.cper_page = 4;
	st.more_data = AMDSMI_STATUS_MORE_DATA;
	char line[512];
	while (fgets(line, sizeof(line), fp)) {
		char word[32];
		int off = 0;
		if (sscanf(line, "%31s%n", word, &off) != 1) continue;
		char *rest = line + off;
		if (!strcmp(word, "version")) {
			sscanf(rest, "%d %d %d", &st.major, &st.minor, &st.release);
		} else if (!strcmp(word, "init_fail")) {
			sscanf(rest, "%d", &st.init_fail);
		} else if (!strcmp(word, "cper_page")) {
			sscanf(rest, "%d", &st.cper_page);
		} else if (!strcmp(word, "more_data")) {
			sscanf(rest, "%d", &st.more_data);
		} else if (!strcmp(word, "metrics_xcp_stride")) {
			sscanf(rest, "%d", &st.xcp_stride);
		} else if (!strcmp(word, "link_stride")) {
			sscanf(rest, "%d", &st.link_stride);
		} else if (!strcmp(word, "gpu") && st.ngpu < MAX_GPUS) {
			gpu_t *g = &st.gpu[st.ngpu];
			if (sscanf(rest, "%15s %39s %15s %7s %7s %d %d", g->kind, g->uuid, g->bdf, g->compute, g->memory, &g->partitions, &g->load) == 7) {
				if (g->partitions < 1) g->partitions = 1;
				if (g->partitions > MAX_PART) g->partitions = MAX_PART;
				for (int p = 0; p < MAX_PART; p++) {
					g->energy_reads[p] = keep[st.ngpu][p];
					g->xcp_load[p] = -1;
				}
				g->link_reads = keep[st.ngpu][MAX_PART];
				st.ngpu++;
			}
		} else if (!strcmp(word, "gone")) {
			int g;
			if (sscanf(rest, "%d", &g) == 1 && g >= 0 && g < MAX_GPUS) st.gpu[g].gone = 1;
		} else if (!strcmp(word, "xcp_load")) {
			int g, x, l;
			if (sscanf(rest, "%d %d %d", &g, &x, &l) == 3 && g >= 0 && g < MAX_GPUS && x >= 0 && x < MAX_PART)
				st.gpu[g].xcp_load[x] = l;
		} else if (!strcmp(word, "xcc_busy")) {
			int g, x, c;
			unsigned long v;
			if (sscanf(rest, "%d %d %d %lu", &g, &x, &c, &v) == 4 && g >= 0 && g < MAX_GPUS && x >= 0 && x < MAX_PART && c >= 0 && c < MAX_XCC) {
				st.gpu[g].xcc_set[x][c] = 1;
				st.gpu[g].xcc[x][c] = (uint32_t)v;
			}
		} else if (!strcmp(word, "ecc") && st.necc < MAX_ECC) {
			ecc_t *e = &st.ecc[st.necc];
			if (sscanf(rest, "%d %15s %lu %lu %lu", &e->gpu, e->block, &e->ce, &e->ue, &e->de) == 5) st.necc++;
		} else if (!strcmp(word, "bad_page") && st.nbad < MAX_BAD) {
			bad_t *b = &st.bad[st.nbad];
			if (sscanf(rest, "%d %d", &b->gpu, &b->status) == 2) st.nbad++;
		} else if (!strcmp(word, "cper") && st.ncper < MAX_CPER) {
			cper_t *c = &st.cper[st.ncper];
			int n = 0;
			if (sscanf(rest, "%d %d%n", &c->gpu, &c->severity, &n) != 2) continue;
			char *p = rest + n;
			while (c->nafid < MAX_NUMBER_OF_AFIDS_PER_RECORD) {
				int used;
				if (sscanf(p, "%lu%n", &c->afid[c->nafid], &used) != 1) break;
				c->nafid++;
				p += used;
			}
			st.ncper++;
		} else if (!strcmp(word, "fail") && st.nfail < MAX_FAIL) {
			fail_t *fl = &st.fail[st.nfail];
			if (sscanf(rest, "%63s %d %d", fl->call, &fl->gpu, &fl->status) == 3) st.nfail++;
		} else if (!strcmp(word, "proc")) {
			procs_line(rest);
		}
	}
}

// load reads the state file again if it changed since it was last read.
static void load(void) {
	const char *path = getenv("STANDIN_AMDSMI_STATE");
	struct stat sb;
	if (!path || stat(path, &sb) != 0) return;
	if (sb.st_size == loaded_size && sb.st_ino == loaded_ino &&
	    sb.st_mtim.tv_sec == loaded_mtime.tv_sec && sb.st_mtim.tv_nsec == loaded_mtime.tv_nsec) return;
	FILE *fp = fopen(path, "r");
	if (!fp) return;
	int same = strcmp(path, loaded_path) == 0;
	parse(fp, same);
	fclose(fp);
	snprintf(loaded_path, sizeof(loaded_path), "%s", path);
	loaded_size = sb.st_size;
	loaded_ino = sb.st_ino;
	loaded_mtime = sb.st_mtim;
}

// A processor handle is 1 + GPU * 256 + partition.
static amdsmi_processor_handle handle_of(int g, int p) { return (amdsmi_processor_handle)(uintptr_t)(1 + g * 256 + p); }

static int decode(amdsmi_processor_handle h, int *g, int *p) {
	uintptr_t v = (uintptr_t)h;
	if (v == 0) return AMDSMI_STATUS_INVAL;
	v--;
	*g = (int)(v / 256);
	*p = (int)(v % 256);
	if (*g >= st.ngpu || *p >= st.gpu[*g].partitions) return AMDSMI_STATUS_INVAL;
	if (st.gpu[*g].gone) return AMDSMI_STATUS_NOT_FOUND;
	return AMDSMI_STATUS_SUCCESS;
}

static int failing(const char *call, int g) {
	for (int i = 0; i < st.nfail; i++)
		if (st.fail[i].gpu == g && !strcmp(st.fail[i].call, call)) return st.fail[i].status;
	return 0;
}

static int is_mi300(const gpu_t *g) { return !strcmp(g->kind, "mi300x"); }

// enter checks a per-device call: the handle, injected failures, and
// whether the figure is the board's (the first partition's only).
#define ENTER(board) \
	int g, p; \
	int rc_ = decode(h, &g, &p); \
	if (rc_) return rc_; \
	if ((rc_ = failing(__func__, g))) return rc_; \
	if ((board) && p > 0) return AMDSMI_STATUS_NOT_SUPPORTED; \
	gpu_t *gp = &st.gpu[g]; \
	(void)gp;

amdsmi_status_t amdsmi_init(uint64_t flags) {
	(void)flags;
	load();
	return st.init_fail ? st.init_fail : AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_shut_down(void) { return AMDSMI_STATUS_SUCCESS; }

amdsmi_status_t amdsmi_get_lib_version(amdsmi_version_t *v) {
	load();
	if (!v) return AMDSMI_STATUS_INVAL;
	memset(v, 0, sizeof(*v));
#if AMDSMI_LIB_VERSION_MAJOR < 26
	// 26.x removed year, the first field, which 25.x sets to its major.
	v->year = st.major;
#endif
	v->major = st.major;
	v->minor = st.minor;
	v->release = st.release;
	v->build = "standin";
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_status_code_to_string(amdsmi_status_t status, const char **s) {
	switch (status) {
	case AMDSMI_STATUS_SUCCESS: *s = "AMDSMI_STATUS_SUCCESS"; break;
	case AMDSMI_STATUS_NOT_SUPPORTED: *s = "AMDSMI_STATUS_NOT_SUPPORTED"; break;
	case AMDSMI_STATUS_API_FAILED: *s = "AMDSMI_STATUS_API_FAILED"; break;
	case AMDSMI_STATUS_NOT_FOUND: *s = "AMDSMI_STATUS_NOT_FOUND"; break;
	case AMDSMI_STATUS_DRIVER_NOT_LOADED: *s = "AMDSMI_STATUS_DRIVER_NOT_LOADED"; break;
	case AMDSMI_STATUS_NO_PERM: *s = "AMDSMI_STATUS_NO_PERM"; break;
	case AMDSMI_STATUS_BUSY: *s = "AMDSMI_STATUS_BUSY"; break;
	default: *s = "AMDSMI_STATUS_UNKNOWN_ERROR"; break;
	}
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_socket_handles(uint32_t *count, amdsmi_socket_handle *out) {
	load();
	if (!count) return AMDSMI_STATUS_INVAL;
	if (!out) {
		*count = st.ngpu;
		return AMDSMI_STATUS_SUCCESS;
	}
	uint32_t n = *count < (uint32_t)st.ngpu ? *count : (uint32_t)st.ngpu;
	for (uint32_t i = 0; i < n; i++) out[i] = (amdsmi_socket_handle)(uintptr_t)(i + 1);
	*count = n;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_processor_handles(amdsmi_socket_handle s, uint32_t *count, amdsmi_processor_handle *out) {
	int g = (int)(uintptr_t)s - 1;
	if (!count || g < 0 || g >= st.ngpu) return AMDSMI_STATUS_INVAL;
	int n = st.gpu[g].partitions;
	if (!out) {
		*count = n;
		return AMDSMI_STATUS_SUCCESS;
	}
	if (*count < (uint32_t)n) n = *count;
	for (int p = 0; p < n; p++) out[p] = handle_of(g, p);
	*count = n;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_processor_type(amdsmi_processor_handle h, processor_type_t *t) {
	ENTER(0)
	*t = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
	return AMDSMI_STATUS_SUCCESS;
}

// A partition's UUID differs from its GPU's in the first byte, as the
// driver derives it from the partition's index.
amdsmi_status_t amdsmi_get_gpu_device_uuid(amdsmi_processor_handle h, unsigned int *len, char *uuid) {
	ENTER(0)
	if (!len || !uuid || *len < AMDSMI_GPU_UUID_SIZE) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
	snprintf(uuid, *len, "%s", gp->uuid);
	if (p > 0) {
		unsigned first = 0;
		char hex[3];
		sscanf(gp->uuid, "%2x", &first);
		snprintf(hex, sizeof(hex), "%02x", (first - p) & 0xff);
		uuid[0] = hex[0];
		uuid[1] = hex[1];
	}
	*len = strlen(uuid);
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_asic_info(amdsmi_processor_handle h, amdsmi_asic_info_t *info) {
	ENTER(0)
	memset(info, 0, sizeof(*info));
	snprintf(info->market_name, sizeof(info->market_name), "%s", is_mi300(gp) ? "AMD Instinct MI300X OAM" : "AMD Instinct MI250X / MI250");
	info->vendor_id = 0x1002;
	snprintf(info->vendor_name, sizeof(info->vendor_name), "Advanced Micro Devices Inc. [AMD/ATI]");
	info->device_id = is_mi300(gp) ? 0x74a1 : 0x740c;
	info->num_of_compute_units = is_mi300(gp) ? 304 / gp->partitions : 110;
	info->target_graphics_version = is_mi300(gp) ? 0x942 : 0x90a;
	return AMDSMI_STATUS_SUCCESS;
}

// A partition's BDF is its GPU's with the partition's index as function.
amdsmi_status_t amdsmi_get_gpu_device_bdf(amdsmi_processor_handle h, amdsmi_bdf_t *bdf) {
	ENTER(0)
	unsigned dom, bus, dev, fn;
	if (sscanf(gp->bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) return AMDSMI_STATUS_UNEXPECTED_DATA;
	bdf->as_uint = 0;
	bdf->domain_number = dom;
	bdf->bus_number = bus;
	bdf->device_number = dev;
	bdf->function_number = fn + p;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_driver_info(amdsmi_processor_handle h, amdsmi_driver_info_t *info) {
	ENTER(0)
	memset(info, 0, sizeof(*info));
	snprintf(info->driver_name, sizeof(info->driver_name), "amdgpu");
	snprintf(info->driver_version, sizeof(info->driver_version), "6.12.12");
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_compute_partition(amdsmi_processor_handle h, char *out, uint32_t len) {
	ENTER(0)
	if (!strcmp(gp->compute, "-")) return AMDSMI_STATUS_NOT_SUPPORTED;
	snprintf(out, len, "%s", gp->compute);
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_memory_partition(amdsmi_processor_handle h, char *out, uint32_t len) {
	ENTER(0)
	if (!strcmp(gp->memory, "-")) return AMDSMI_STATUS_NOT_SUPPORTED;
	snprintf(out, len, "%s", gp->memory);
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_kfd_info(amdsmi_processor_handle h, amdsmi_kfd_info_t *info) {
	ENTER(0)
	memset(info, 0, sizeof(*info));
	info->kfd_id = 1000 + g * 16 + p;
	info->node_id = 1 + g * MAX_PART + p;
	info->current_partition_id = strcmp(gp->compute, "-") ? (uint32_t)p : 0xffffffff;
	return AMDSMI_STATUS_SUCCESS;
}

// load_of_xcp is the graphics activity of XCP x; gpu_load the whole GPU's,
// their mean.
static int load_of_xcp(const gpu_t *gp, int x) { return gp->xcp_load[x] >= 0 ? gp->xcp_load[x] : gp->load; }

static int gpu_load(const gpu_t *gp) {
	int sum = 0;
	for (int x = 0; x < gp->partitions; x++) sum += load_of_xcp(gp, x);
	return sum / gp->partitions;
}

// The state file is looked at once per reading of the node, when the
// first processor's activity is read (the first call of a reading), so
// that the stand-in costs a benchmark one stat and not one per call.
amdsmi_status_t amdsmi_get_gpu_activity(amdsmi_processor_handle h, amdsmi_engine_usage_t *u) {
	if ((uintptr_t)h == 1) load();
	ENTER(1)
	memset(u, 0, sizeof(*u));
	u->gfx_activity = gpu_load(gp);
	u->umc_activity = gp->load / 2;
	u->mm_activity = is_mi300(gp) ? 0 : 0xffff;
	return AMDSMI_STATUS_SUCCESS;
}

// layout is how the library of a version lays out amdsmi_gpu_metrics_t
// and amdsmi_link_metrics_t, as AMD's headers of each version do (the
// table in internal/amdsmibackend/lib.go): the stand-in writes them as
// bytes at these strides, whatever header it is built against, so that it
// answers as a library of the version it says it is. Offsets other than
// the strides are the same in every version.
typedef struct { int gm_size, xcp_stride, lm_size, link_stride, xgmi; } layout_t;

static layout_t layout_of(void) {
	layout_t l = {sizeof(amdsmi_gpu_metrics_t), sizeof(amdsmi_gpu_xcp_metrics_t),
		sizeof(amdsmi_link_metrics_t), sizeof(((amdsmi_link_metrics_t *)0)->links[0]), AMDSMI_LINK_TYPE_XGMI};
	if (st.major == 25) l = (layout_t){2368, 232, 3648, 56, 1};
	if (st.major == 26) {
		l = (layout_t){4544, 504, 3648, 56, 2};
		if (st.minor == 2) l.lm_size = 3136, l.link_stride = 48;
		if (st.minor >= 4) l.gm_size = 4720, l.xcp_stride = 520;
	}
	if (st.xcp_stride) l.gm_size = 480 + 8 * st.xcp_stride + 64, l.xcp_stride = st.xcp_stride;
	if (st.link_stride) l.lm_size = 8 + 64 * st.link_stride + 56, l.link_stride = st.link_stride;
	return l;
}

static void put32(void *base, size_t off, uint32_t v) { memcpy((char *)base + off, &v, sizeof(v)); }
static void put64(void *base, size_t off, uint64_t v) { memcpy((char *)base + off, &v, sizeof(v)); }

// The metrics table: gpu_metrics v1.6 on MI300X, with XCP statistics;
// v1.3 on MI250, without (num_partition and every XCC entry at their
// "not available" maximum, as AMD SMI hands them on). The fields before
// xcp_stats are where the header says; the XCP entries at the layout's
// stride.
amdsmi_status_t amdsmi_get_gpu_metrics_info(amdsmi_processor_handle h, amdsmi_gpu_metrics_t *m) {
	ENTER(0)
	if (!m) return AMDSMI_STATUS_INVAL;
	layout_t l = layout_of();
	const size_t xcp = offsetof(amdsmi_gpu_metrics_t, xcp_stats);
	memset(m, 0, l.gm_size);
	m->common_header.structure_size = l.gm_size;
	m->common_header.format_revision = 1;
	m->common_header.content_revision = is_mi300(gp) ? 6 : 3;
	m->average_gfx_activity = gpu_load(gp);
	m->average_umc_activity = gp->load / 2;
	for (int x = 0; x < AMDSMI_MAX_NUM_XCP; x++)
		for (int c = 0; c < AMDSMI_MAX_NUM_XCC; c++) put32(m, xcp + x * l.xcp_stride + c * 4, UINT32_MAX);
	if (!is_mi300(gp)) {
		m->num_partition = UINT16_MAX;
		return AMDSMI_STATUS_SUCCESS;
	}
	m->num_partition = gp->partitions;
	int per = MAX_XCC / gp->partitions;
	for (int x = 0; x < gp->partitions; x++) {
		for (int c = 0; c < MAX_XCC; c++) {
			if (c < per) put32(m, xcp + x * l.xcp_stride + c * 4, load_of_xcp(gp, x));
			if (gp->xcc_set[x][c]) put32(m, xcp + x * l.xcp_stride + c * 4, gp->xcc[x][c]);
		}
	}
	return AMDSMI_STATUS_SUCCESS;
}

static uint64_t vram_total(const gpu_t *gp) {
	return (is_mi300(gp) ? 196592ULL : 65520ULL) * 1048576ULL / gp->partitions;
}

amdsmi_status_t amdsmi_get_gpu_memory_total(amdsmi_processor_handle h, amdsmi_memory_type_t t, uint64_t *total) {
	ENTER(0)
	if (t != AMDSMI_MEM_TYPE_VRAM) return AMDSMI_STATUS_NOT_SUPPORTED;
	*total = vram_total(gp);
	return AMDSMI_STATUS_SUCCESS;
}

// Used VRAM follows the load; an idle GPU holds the driver's own 283 MiB.
amdsmi_status_t amdsmi_get_gpu_memory_usage(amdsmi_processor_handle h, amdsmi_memory_type_t t, uint64_t *used) {
	ENTER(0)
	if (t != AMDSMI_MEM_TYPE_VRAM) return AMDSMI_STATUS_NOT_SUPPORTED;
	*used = 283ULL * 1048576ULL + vram_total(gp) / 100 * (uint64_t)gp->load * 8 / 10;
	return AMDSMI_STATUS_SUCCESS;
}

// MI300X reports its current socket power; MI250 only the average.
amdsmi_status_t amdsmi_get_power_info(amdsmi_processor_handle h, amdsmi_power_info_t *pw) {
	ENTER(1)
	memset(pw, 0, sizeof(*pw));
	if (is_mi300(gp)) {
		pw->current_socket_power = 140 + gp->load * 56 / 10;
		pw->average_socket_power = 0xffff;
		pw->power_limit = 750;
	} else {
		pw->current_socket_power = 0xffff;
		pw->average_socket_power = 90 + gp->load * 4;
		pw->power_limit = 560;
	}
	pw->gfx_voltage = pw->soc_voltage = pw->mem_voltage = 0xffff;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_power_cap_info(amdsmi_processor_handle h, uint32_t sensor, amdsmi_power_cap_info_t *c) {
	ENTER(1)
	(void)sensor;
	memset(c, 0, sizeof(*c));
	c->power_cap = c->default_power_cap = c->max_power_cap = (is_mi300(gp) ? 750ULL : 560ULL) * 1000000ULL;
	c->min_power_cap = 0;
	return AMDSMI_STATUS_SUCCESS;
}

// Energy advances by one reading's worth per read: 10 s at the current
// power, in units of 15.259 uJ.
amdsmi_status_t amdsmi_get_energy_count(amdsmi_processor_handle h, uint64_t *acc, float *res, uint64_t *ts) {
	ENTER(1)
	uint64_t watts = is_mi300(gp) ? 140 + gp->load * 56 / 10 : 90 + gp->load * 4;
	gp->energy_reads[p]++;
	*res = 15.259f;
	*acc = 4000000000ULL + gp->energy_reads[p] * (uint64_t)(watts * 10 * 1e6 / 15.259);
	*ts = gp->energy_reads[p] * 10000000000ULL;
	return AMDSMI_STATUS_SUCCESS;
}

// MI300X has no edge sensor.
amdsmi_status_t amdsmi_get_temp_metric(amdsmi_processor_handle h, amdsmi_temperature_type_t type, amdsmi_temperature_metric_t m, int64_t *t) {
	ENTER(1)
	if (m != AMDSMI_TEMP_CURRENT) return AMDSMI_STATUS_NOT_SUPPORTED;
	switch (type) {
	case AMDSMI_TEMPERATURE_TYPE_EDGE:
		if (is_mi300(gp)) return AMDSMI_STATUS_NOT_SUPPORTED;
		*t = 34 + gp->load / 5;
		break;
	case AMDSMI_TEMPERATURE_TYPE_HOTSPOT: *t = 40 + gp->load * 4 / 10; break;
	case AMDSMI_TEMPERATURE_TYPE_VRAM: *t = 38 + gp->load / 4; break;
	default: return AMDSMI_STATUS_NOT_SUPPORTED;
	}
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_clock_info(amdsmi_processor_handle h, amdsmi_clk_type_t type, amdsmi_clk_info_t *c) {
	ENTER(1)
	memset(c, 0, sizeof(*c));
	if (type == AMDSMI_CLK_TYPE_GFX) {
		c->max_clk = is_mi300(gp) ? 2100 : 1700;
		c->min_clk = 500;
		c->clk = gp->load ? c->max_clk : 132;
	} else if (type == AMDSMI_CLK_TYPE_MEM) {
		c->max_clk = c->clk = is_mi300(gp) ? 1300 : 1600;
		c->min_clk = 900;
	} else {
		return AMDSMI_STATUS_NOT_SUPPORTED;
	}
	return AMDSMI_STATUS_SUCCESS;
}

// Violation status is MI300's; a busy GPU runs into its power cap a
// fifth of the time.
amdsmi_status_t amdsmi_get_violation_status(amdsmi_processor_handle h, amdsmi_violation_status_t *v) {
	ENTER(1)
	if (!is_mi300(gp)) return AMDSMI_STATUS_NOT_SUPPORTED;
	memset(v, 0, sizeof(*v));
	v->per_ppt_pwr = gp->load > 80 ? 20 : 0;
	v->per_socket_thrm = 0;
	v->per_vr_thrm = 0;
	v->per_hbm_thrm = 0;
	v->per_prochot_thrm = 0;
	v->per_gfx_clk_below_host_limit = UINT64_MAX;
	return AMDSMI_STATUS_SUCCESS;
}

static const char *block_names[] = {
	"umc", "sdma", "gfx", "mmhub", "athub", "pcie_bif", "hdp", "xgmi_wafl", "df", "smn",
	"sem", "mp0", "mp1", "fuse", "mca", "vcn", "jpeg", "ih", "mpio",
};

amdsmi_status_t amdsmi_get_gpu_ecc_enabled(amdsmi_processor_handle h, uint64_t *mask) {
	ENTER(1)
	*mask = AMDSMI_GPU_BLOCK_UMC | AMDSMI_GPU_BLOCK_SDMA | AMDSMI_GPU_BLOCK_GFX | AMDSMI_GPU_BLOCK_MMHUB |
		AMDSMI_GPU_BLOCK_HDP | AMDSMI_GPU_BLOCK_XGMI_WAFL;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_ecc_count(amdsmi_processor_handle h, amdsmi_gpu_block_t block, amdsmi_error_count_t *ec) {
	ENTER(1)
	memset(ec, 0, sizeof(*ec));
	int bit = __builtin_ctzll((uint64_t)block);
	if (bit >= (int)(sizeof(block_names) / sizeof(block_names[0]))) return AMDSMI_STATUS_INVAL;
	for (int i = 0; i < st.necc; i++) {
		if (st.ecc[i].gpu == g && !strcmp(st.ecc[i].block, block_names[bit])) {
			ec->correctable_count = st.ecc[i].ce;
			ec->uncorrectable_count = st.ecc[i].ue;
			ec->deferred_count = st.ecc[i].de;
		}
	}
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_bad_page_info(amdsmi_processor_handle h, uint32_t *num, amdsmi_retired_page_record_t *info) {
	ENTER(1)
	uint32_t n = 0;
	for (int i = 0; i < st.nbad; i++) {
		if (st.bad[i].gpu != g) continue;
		if (info && n < *num) {
			info[n].page_address = 0x1000000ULL * (n + 1);
			info[n].page_size = 4096;
			info[n].status = (amdsmi_memory_page_status_t)st.bad[i].status;
		}
		n++;
	}
	*num = n;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_bad_page_threshold(amdsmi_processor_handle h, uint32_t *threshold) {
	ENTER(1)
	if (!is_mi300(gp)) return AMDSMI_STATUS_NOT_SUPPORTED;
	*threshold = 128;
	return AMDSMI_STATUS_SUCCESS;
}

// XGMI traffic grows with the load: 7 links on MI300X (an 8-GPU hive), 3
// on MI250.
amdsmi_status_t amdsmi_get_link_metrics(amdsmi_processor_handle h, amdsmi_link_metrics_t *lm) {
	ENTER(1)
	layout_t l = layout_of();
	memset(lm, 0, l.lm_size);
	gp->link_reads++;
	lm->num_links = is_mi300(gp) ? 7 : 3;
	for (uint32_t i = 0; i < lm->num_links; i++) {
		size_t at = offsetof(amdsmi_link_metrics_t, links) + i * l.link_stride;
		put32(lm, at + offsetof(struct _links, bit_rate), 32);
		put32(lm, at + offsetof(struct _links, max_bandwidth), is_mi300(gp) ? 512 : 400);
		put32(lm, at + offsetof(struct _links, link_type), l.xgmi);
		put64(lm, at + offsetof(struct _links, read), gp->link_reads * (uint64_t)gp->load * 1000 * (i + 1));
		put64(lm, at + offsetof(struct _links, write), gp->link_reads * (uint64_t)gp->load * 900 * (i + 1));
	}
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_pci_throughput(amdsmi_processor_handle h, uint64_t *sent, uint64_t *received, uint64_t *max_pkt) {
	ENTER(1)
	if (sent) *sent = 2000000ULL + gp->load * 100000ULL;
	if (received) *received = 8000000ULL + gp->load * 300000ULL;
	if (max_pkt) *max_pkt = 256;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_pci_replay_counter(amdsmi_processor_handle h, uint64_t *counter) {
	ENTER(1)
	*counter = 0;
	return AMDSMI_STATUS_SUCCESS;
}

// amdsmi_get_gpu_process_list answers as AMD SMI does: with *max 0 or no
// list, the count; with a list too small, the list filled,
// OUT_OF_RESOURCES and the count.
amdsmi_status_t amdsmi_get_gpu_process_list(amdsmi_processor_handle h, uint32_t *max, amdsmi_proc_info_t *list) {
	ENTER(0)
	uint32_t n = 0;
	int listed = 0;
	for (int i = 0; i < procs.n; i++)
		if (procs.p[i].gpu == g && procs.p[i].part == p) listed = 1, n++;
	if (!listed) n = gp->load > 0 ? 1 : 0;
	if (*max == 0 || !list) {
		*max = n;
		return AMDSMI_STATUS_SUCCESS;
	}
	uint32_t k = 0;
	for (int i = 0; listed && i < procs.n && k < *max; i++) {
		proc_t *pr = &procs.p[i];
		if (pr->gpu != g || pr->part != p) continue;
		amdsmi_proc_info_t *o = &list[k++];
		memset(o, 0, sizeof(*o));
		snprintf(o->name, sizeof(o->name), "python3");
		o->pid = pr->pid;
		o->memory_usage.vram_mem = pr->vram;
		o->mem = pr->vram;
		o->engine_usage.gfx = pr->gfx + pr->listings * pr->step;
		o->engine_usage.enc = pr->listings * pr->enc_step;
		pr->listings++;
	}
	if (!listed && n > 0) {
		memset(&list[0], 0, sizeof(list[0]));
		snprintf(list[0].name, sizeof(list[0].name), "python3");
		list[0].pid = 4242 + g * 16 + p;
		list[0].mem = vram_total(gp) / 2;
		list[0].memory_usage.vram_mem = list[0].mem;
	}
	int st_ = n > *max ? AMDSMI_STATUS_OUT_OF_RESOURCES : AMDSMI_STATUS_SUCCESS;
	*max = n;
	return st_;
}

// A CPER record here is the header followed by its AFIDs: a count and the
// IDs. amdsmi_get_afids_from_cper below reads them back.
amdsmi_status_t amdsmi_get_gpu_cper_entries(amdsmi_processor_handle h, uint32_t mask, char *data, uint64_t *size,
                                            amdsmi_cper_hdr_t **hdrs, uint64_t *count, uint64_t *cursor) {
	ENTER(1)
	if (!is_mi300(gp)) return AMDSMI_STATUS_NOT_SUPPORTED;
	if (!data || !size || !hdrs || !count || !cursor) return AMDSMI_STATUS_INVAL;
	int idx[MAX_CPER], n = 0;
	for (int i = 0; i < st.ncper; i++)
		if (st.cper[i].gpu == g && (mask & (1u << st.cper[i].severity))) idx[n++] = i;
	uint64_t used = 0, out = 0, c = *cursor;
	while (c < (uint64_t)n && out < *count && out < (uint64_t)st.cper_page) {
		cper_t *rec = &st.cper[idx[c]];
		uint64_t len = sizeof(amdsmi_cper_hdr_t) + sizeof(uint32_t) + rec->nafid * sizeof(uint64_t);
		if (used + len > *size) {
			if (out == 0) return AMDSMI_STATUS_OUT_OF_RESOURCES;
			break;
		}
		amdsmi_cper_hdr_t *hdr = (amdsmi_cper_hdr_t *)(data + used);
		memset(hdr, 0, sizeof(*hdr));
		memcpy(hdr->signature, "CPER", 4);
		hdr->revision = 0x100;
		hdr->signature_end = 0xffffffff;
		hdr->sec_cnt = 1;
		hdr->error_severity = (amdsmi_cper_sev_t)rec->severity;
		hdr->record_length = (uint32_t)len;
		memcpy(hdr->record_id, &c, sizeof(hdr->record_id));
		uint32_t na = rec->nafid;
		memcpy(data + used + sizeof(*hdr), &na, sizeof(na));
		memcpy(data + used + sizeof(*hdr) + sizeof(na), rec->afid, na * sizeof(uint64_t));
		hdrs[out++] = hdr;
		used += len;
		c++;
	}
	*size = used;
	*count = out;
	*cursor = c;
	return c < (uint64_t)n ? (amdsmi_status_t)st.more_data : AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_afids_from_cper(char *buf, uint32_t size, uint64_t *afids, uint32_t *num) {
	if (!buf || !num || size < sizeof(amdsmi_cper_hdr_t) + sizeof(uint32_t)) return AMDSMI_STATUS_INVAL;
	uint32_t na;
	memcpy(&na, buf + sizeof(amdsmi_cper_hdr_t), sizeof(na));
	uint32_t n = na < *num ? na : *num;
	if (afids) memcpy(afids, buf + sizeof(amdsmi_cper_hdr_t) + sizeof(na), n * sizeof(uint64_t));
	*num = na;
	return AMDSMI_STATUS_SUCCESS;
}
