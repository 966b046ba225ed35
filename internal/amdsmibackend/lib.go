package amdsmibackend

/*
#cgo CFLAGS: -I${SRCDIR}/include
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "amd_smi/amdsmi.h"

// The library is opened at run time, so that the collector starts where
// ROCm is not installed: nothing here links against it. Each function is
// called through a pointer of the type AMD's header declares, so that a
// mismatch with the header is a compile error here, and the stand-in
// library of the tests, compiled against the same header, is called the
// way the real one is.
#define OTG_FN(name) static __typeof__(name) *p_##name;
OTG_FN(amdsmi_init)
OTG_FN(amdsmi_shut_down)
OTG_FN(amdsmi_get_lib_version)
OTG_FN(amdsmi_get_socket_handles)
OTG_FN(amdsmi_get_processor_handles)
OTG_FN(amdsmi_get_processor_type)
OTG_FN(amdsmi_status_code_to_string)
OTG_FN(amdsmi_get_gpu_asic_info)
OTG_FN(amdsmi_get_gpu_device_uuid)
OTG_FN(amdsmi_get_gpu_device_bdf)
OTG_FN(amdsmi_get_gpu_driver_info)
OTG_FN(amdsmi_get_gpu_compute_partition)
OTG_FN(amdsmi_get_gpu_memory_partition)
OTG_FN(amdsmi_get_gpu_kfd_info)
OTG_FN(amdsmi_get_gpu_activity)
OTG_FN(amdsmi_get_gpu_metrics_info)
OTG_FN(amdsmi_get_gpu_memory_usage)
OTG_FN(amdsmi_get_gpu_memory_total)
OTG_FN(amdsmi_get_power_info)
OTG_FN(amdsmi_get_power_cap_info)
OTG_FN(amdsmi_get_energy_count)
OTG_FN(amdsmi_get_temp_metric)
OTG_FN(amdsmi_get_clock_info)
OTG_FN(amdsmi_get_violation_status)
OTG_FN(amdsmi_get_gpu_ecc_enabled)
OTG_FN(amdsmi_get_gpu_ecc_count)
OTG_FN(amdsmi_get_gpu_bad_page_info)
OTG_FN(amdsmi_get_gpu_bad_page_threshold)
OTG_FN(amdsmi_get_link_metrics)
OTG_FN(amdsmi_get_gpu_pci_throughput)
OTG_FN(amdsmi_get_gpu_pci_replay_counter)
OTG_FN(amdsmi_get_gpu_process_list)
OTG_FN(amdsmi_get_gpu_cper_entries)
OTG_FN(amdsmi_get_afids_from_cper)

static void *otg_lib;

#define OTG_SYM(name) p_##name = (__typeof__(name) *)dlsym(otg_lib, #name);

// otg_open_error is why the last otg_open failed, as dlerror said it.
// dlerror is per thread: read from Go in a second cgo call, it may run on
// another thread and say nothing, so otg_open keeps its answer here (open
// holds libMu around both).
static char otg_open_error[512];
static const char *otg_open_err(void) { return otg_open_error; }

// otg_open opens the library at path and resolves its functions. It
// returns 0, or 1 when dlopen fails (otg_open_error says why), or 2 when
// one of the functions every version has is missing. A function added in
// a later version may be missing: its calls then answer NOT_SUPPORTED.
static int otg_open(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(otg_open_error, sizeof otg_open_error, "%s", e ? e : "dlopen failed");
		return 1;
	}
	otg_lib = h;
	OTG_SYM(amdsmi_init)
	OTG_SYM(amdsmi_shut_down)
	OTG_SYM(amdsmi_get_lib_version)
	OTG_SYM(amdsmi_get_socket_handles)
	OTG_SYM(amdsmi_get_processor_handles)
	OTG_SYM(amdsmi_get_processor_type)
	OTG_SYM(amdsmi_status_code_to_string)
	OTG_SYM(amdsmi_get_gpu_asic_info)
	OTG_SYM(amdsmi_get_gpu_device_uuid)
	OTG_SYM(amdsmi_get_gpu_device_bdf)
	OTG_SYM(amdsmi_get_gpu_driver_info)
	OTG_SYM(amdsmi_get_gpu_compute_partition)
	OTG_SYM(amdsmi_get_gpu_memory_partition)
	OTG_SYM(amdsmi_get_gpu_kfd_info)
	OTG_SYM(amdsmi_get_gpu_activity)
	OTG_SYM(amdsmi_get_gpu_metrics_info)
	OTG_SYM(amdsmi_get_gpu_memory_usage)
	OTG_SYM(amdsmi_get_gpu_memory_total)
	OTG_SYM(amdsmi_get_power_info)
	OTG_SYM(amdsmi_get_power_cap_info)
	OTG_SYM(amdsmi_get_energy_count)
	OTG_SYM(amdsmi_get_temp_metric)
	OTG_SYM(amdsmi_get_clock_info)
	OTG_SYM(amdsmi_get_violation_status)
	OTG_SYM(amdsmi_get_gpu_ecc_enabled)
	OTG_SYM(amdsmi_get_gpu_ecc_count)
	OTG_SYM(amdsmi_get_gpu_bad_page_info)
	OTG_SYM(amdsmi_get_gpu_bad_page_threshold)
	OTG_SYM(amdsmi_get_link_metrics)
	OTG_SYM(amdsmi_get_gpu_pci_throughput)
	OTG_SYM(amdsmi_get_gpu_pci_replay_counter)
	OTG_SYM(amdsmi_get_gpu_process_list)
	OTG_SYM(amdsmi_get_gpu_cper_entries)
	OTG_SYM(amdsmi_get_afids_from_cper)
	if (!p_amdsmi_init || !p_amdsmi_shut_down || !p_amdsmi_get_lib_version ||
	    !p_amdsmi_get_socket_handles || !p_amdsmi_get_processor_handles ||
	    !p_amdsmi_get_processor_type || !p_amdsmi_get_gpu_device_uuid) return 2;
	return 0;
}

#define OTG_CALL(name, ...) (p_##name ? p_##name(__VA_ARGS__) : AMDSMI_STATUS_FAIL_LOAD_SYMBOL)

static int otg_init(void) { return OTG_CALL(amdsmi_init, AMDSMI_INIT_AMD_GPUS); }
static int otg_shut_down(void) { return OTG_CALL(amdsmi_shut_down); }

// This package is compiled against AMD SMI 25.x's header and reads 26.x
// libraries (ROCm 7) too. Where a structure read here differs in 26.x, a
// mirror of its 26.x layout, checked against the offsets of AMD's 26.0 to
// 26.5 headers, is what the library writes into, chosen by otg_major, the
// library's major version, set once it is known. Structures not mirrored
// here have the same layout in 25.x and every 26.x read.
static int otg_major = AMDSMI_LIB_VERSION_MAJOR;

#define OTG_LAYOUT(cond) _Static_assert(cond, #cond);

// amdsmi_version_t: 26.x removed year, 25.x's first field.
typedef struct {
	uint32_t major, minor, release;
	char *build;
} otg_version26_t;
OTG_LAYOUT(offsetof(amdsmi_version_t, year) == 0 && offsetof(amdsmi_version_t, major) == 4)
OTG_LAYOUT(offsetof(amdsmi_version_t, minor) == 8 && offsetof(amdsmi_version_t, release) == 12)
OTG_LAYOUT(sizeof(amdsmi_version_t) == 24 && sizeof(otg_version26_t) == 24)
OTG_LAYOUT(offsetof(otg_version26_t, build) == 16)

// otg_version reads the library's version before its layout is known:
// {year, major, minor, release} in 25.x and before, where year is the
// last two digits of the year and no more than 25; {major, minor,
// release} from 26.x on, where the first word is the major, 26 or more.
static int otg_version(uint32_t out[3]) {
	union { amdsmi_version_t v25; otg_version26_t v26; } u;
	memset(&u, 0, sizeof(u));
	int st = OTG_CALL(amdsmi_get_lib_version, &u.v25);
	if (st) return st;
	if (u.v26.major >= 26) {
		out[0] = u.v26.major; out[1] = u.v26.minor; out[2] = u.v26.release;
	} else {
		out[0] = u.v25.major; out[1] = u.v25.minor; out[2] = u.v25.release;
	}
	return 0;
}

// amdsmi_power_info_t: 26.x widened the voltages to 64 bits, which moved
// power_limit from 28 to 40, and grew the structure from 40 to 192 bytes.
typedef struct {
	uint64_t socket_power;
	uint32_t current_socket_power;
	uint32_t average_socket_power;
	uint64_t gfx_voltage, soc_voltage, mem_voltage;
	uint32_t power_limit;
	uint64_t reserved[18];
} otg_power_info26_t;
OTG_LAYOUT(sizeof(amdsmi_power_info_t) == 40 && offsetof(amdsmi_power_info_t, power_limit) == 28)
OTG_LAYOUT(offsetof(amdsmi_power_info_t, current_socket_power) == 8 && offsetof(amdsmi_power_info_t, average_socket_power) == 12)
OTG_LAYOUT(sizeof(otg_power_info26_t) == 192 && offsetof(otg_power_info26_t, power_limit) == 40)
OTG_LAYOUT(offsetof(otg_power_info26_t, current_socket_power) == 8 && offsetof(otg_power_info26_t, average_socket_power) == 12)

// amdsmi_violation_status_t: 26.x replaced 25.x's reserved tail (at 128)
// with per-partition arrays, 6016 bytes in all. The first 128 bytes, which
// hold every field read here, are the same.
typedef struct {
	uint64_t head[16];
	uint64_t per_partition[(6016 - 128) / 8];
} otg_violation_status26_t;
OTG_LAYOUT(sizeof(amdsmi_violation_status_t) == 152 && offsetof(amdsmi_violation_status_t, reserved) == 128)
OTG_LAYOUT(offsetof(amdsmi_violation_status_t, per_prochot_thrm) == 72 && offsetof(amdsmi_violation_status_t, per_hbm_thrm) == 104)
OTG_LAYOUT(sizeof(otg_violation_status26_t) == 6016 && offsetof(otg_violation_status26_t, per_partition) == 128)

// AMDSMI_STATUS_MORE_DATA, the status of a CPER page that another follows,
// is 57 in the 25.x libraries AMD released (ROCm 6.4.1 on) and 39 from
// 26.x on, as in the 25.4 header this package is built with, taken from
// AMD's development branch between the two. No released 25.x library has
// a status 39.
#define OTG_MORE_DATA_25 57
#define OTG_MORE_DATA_26 39
OTG_LAYOUT(AMDSMI_STATUS_MORE_DATA == OTG_MORE_DATA_26)

static int otg_more_data(int st) {
	if (otg_major >= 26) return st == OTG_MORE_DATA_26;
	return st == OTG_MORE_DATA_25 || st == OTG_MORE_DATA_26;
}

// The layouts of amdsmi_gpu_metrics_t and amdsmi_link_metrics_t, which
// change from one minor version to the next within a major, taken from
// AMD's headers by compiling each and printing sizeof and offsetof (x86_64;
// the headers AMD ships with its libraries in
// https://github.com/ROCm/device-metrics-exporter,
// assets/amd_smi_lib/x86_64/RHEL9/lib/amdsmi.h, at the commits named):
//
//   version  commit    gpu_metrics  xcp entry  link_metrics  per link  XGMI
//   25.4.0   934252e5  2368         232        3648          56        1
//   26.0.0   9ea4ec9f  4544         504        3648          56        2
//   26.1.0   74005d27  4544         504        3648          56        2
//   26.2.0   6d41e94b  4544         504        3136          48        2
//   26.2.1   b43db803  4544         504        3136          48        2
//   26.3.0   f1f70b70  4544         504        3648          56        2
//   26.4.0   89d30bbd  4720         520        3648          56        2
//   26.5.0   5c03c219  4720         520        3648          56        2
//
// In every one, num_partition (uint16) is at 472 and xcp_stats at 480 of
// amdsmi_gpu_metrics_t, gfx_busy_inst (uint32[8]) at 0 of each xcp entry;
// num_links (uint32) is at 0 of amdsmi_link_metrics_t and links at 8, and
// in each link bit_rate is at 8, max_bandwidth at 12, link_type at 16,
// read at 24 and write at 32 (uint64, KB). What differs is the stride of
// the arrays and AMDSMI_LINK_TYPE_XGMI, 1 in 25.x and 2 from 26.0 on. The
// header this package is compiled with, from AMD's development branch, has
// 26.0's gpu_metrics layout although it says 25.4: it is not what a 25.x
// library AMD released writes, so the 25.x row is that of the header AMD
// released with 25.4.0 (ROCm 6.4), which AMD's ctypes wrapper of ROCm
// 6.4.0 to 6.4.4 agrees with.
typedef struct {
	int major, min_minor, max_minor;
	uint32_t gm_size, xcp_stride;
	uint32_t lm_size, link_stride, link_xgmi;
} otg_layout;

static const otg_layout otg_layouts[] = {
	{25, 0, 1 << 30, 2368, 232, 3648, 56, 1},
	{26, 0, 1, 4544, 504, 3648, 56, 2},
	{26, 2, 2, 4544, 504, 3136, 48, 2},
	{26, 3, 3, 4544, 504, 3648, 56, 2},
	{26, 4, 5, 4720, 520, 3648, 56, 2},
};

#define OTG_GM_NUM_PARTITION 472
#define OTG_GM_XCP_STATS 480
#define OTG_LM_LINKS 8
#define OTG_LINK_BIT_RATE 8
#define OTG_LINK_MAX_BANDWIDTH 12
#define OTG_LINK_TYPE 16
#define OTG_LINK_READ 24
#define OTG_LINK_WRITE 32
#define OTG_MAX_LINKS 64

// The offsets every layout shares, checked against the compiled-in header.
OTG_LAYOUT(offsetof(amdsmi_gpu_metrics_t, num_partition) == OTG_GM_NUM_PARTITION)
OTG_LAYOUT(offsetof(amdsmi_gpu_metrics_t, xcp_stats) == OTG_GM_XCP_STATS)
OTG_LAYOUT(offsetof(amdsmi_gpu_xcp_metrics_t, gfx_busy_inst) == 0)
OTG_LAYOUT(AMDSMI_MAX_NUM_XCC == 8 && AMDSMI_MAX_NUM_XCP == 8)
OTG_LAYOUT(offsetof(amdsmi_link_metrics_t, num_links) == 0 && offsetof(amdsmi_link_metrics_t, links) == OTG_LM_LINKS)
OTG_LAYOUT(offsetof(amdsmi_link_metrics_t, links[0].bit_rate) == OTG_LM_LINKS + OTG_LINK_BIT_RATE)
OTG_LAYOUT(offsetof(amdsmi_link_metrics_t, links[0].max_bandwidth) == OTG_LM_LINKS + OTG_LINK_MAX_BANDWIDTH)
OTG_LAYOUT(offsetof(amdsmi_link_metrics_t, links[0].link_type) == OTG_LM_LINKS + OTG_LINK_TYPE)
OTG_LAYOUT(offsetof(amdsmi_link_metrics_t, links[0].read) == OTG_LM_LINKS + OTG_LINK_READ)
OTG_LAYOUT(offsetof(amdsmi_link_metrics_t, links[0].write) == OTG_LM_LINKS + OTG_LINK_WRITE)
OTG_LAYOUT(AMDSMI_MAX_NUM_XGMI_PHYSICAL_LINK == OTG_MAX_LINKS)

// otg_table is where the library writes amdsmi_gpu_metrics_t or
// amdsmi_link_metrics_t: it writes as many bytes as its own sizeof, which
// may be more than this package's header says, so the buffer holds the
// largest known layout, with room for a later one.
typedef union {
	unsigned char b[8192];
	uint64_t align;
} otg_table;
OTG_LAYOUT(sizeof(otg_table) >= sizeof(amdsmi_gpu_metrics_t) && sizeof(otg_table) >= sizeof(amdsmi_link_metrics_t))
OTG_LAYOUT(sizeof(otg_table) >= 4720 && sizeof(otg_table) >= 3648)

// otg_cur is the layout of the library's version, or null where this
// package does not know it: its tables are then not read.
static const otg_layout *otg_cur = &otg_layouts[0];

static int otg_set_version(int major, int minor) {
	otg_major = major;
	otg_cur = 0;
	for (size_t i = 0; i < sizeof(otg_layouts) / sizeof(otg_layouts[0]); i++) {
		const otg_layout *l = &otg_layouts[i];
		if (l->major == major && minor >= l->min_minor && minor <= l->max_minor) otg_cur = l;
	}
	// Each layout fits the buffer.
	if (otg_cur && (otg_cur->gm_size > sizeof(otg_table) || otg_cur->lm_size > sizeof(otg_table))) otg_cur = 0;
	return otg_cur != 0;
}

static uint16_t otg_u16(const otg_table *t, size_t off) { uint16_t v; memcpy(&v, t->b + off, sizeof(v)); return v; }
static uint32_t otg_u32(const otg_table *t, size_t off) { uint32_t v; memcpy(&v, t->b + off, sizeof(v)); return v; }
static uint64_t otg_u64(const otg_table *t, size_t off) { uint64_t v; memcpy(&v, t->b + off, sizeof(v)); return v; }

// otg_link is one link of a link_metrics table in the layout of otg_cur.
typedef struct {
	uint32_t max_bandwidth, xgmi;
	uint64_t read, write;
} otg_link;

// otg_links reads the XGMI links of a link_metrics table into out (at
// most OTG_MAX_LINKS) with their indices, and returns their count.
static int otg_links(const otg_table *t, otg_link *out, int *index) {
	const otg_layout *l = otg_cur;
	if (!l) return 0;
	uint32_t n = otg_u32(t, 0);
	if (n > OTG_MAX_LINKS) n = OTG_MAX_LINKS;
	int k = 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t at = OTG_LM_LINKS + (size_t)i * l->link_stride;
		if (otg_u32(t, at + OTG_LINK_TYPE) != l->link_xgmi) continue;
		out[k].max_bandwidth = otg_u32(t, at + OTG_LINK_MAX_BANDWIDTH);
		out[k].read = otg_u64(t, at + OTG_LINK_READ);
		out[k].write = otg_u64(t, at + OTG_LINK_WRITE);
		index[k] = (int)i;
		k++;
	}
	return k;
}

static int otg_known_layout(void) { return otg_cur != 0; }

static const char *otg_status_string(int st) {
	const char *s = 0;
	if (p_amdsmi_status_code_to_string && p_amdsmi_status_code_to_string((amdsmi_status_t)st, &s) == AMDSMI_STATUS_SUCCESS && s) return s;
	return "";
}

// otg_processors lists the AMD GPUs (and their partitions), socket by
// socket: out[i] is a processor handle and socket_of[i] its socket's index.
static int otg_processors(uintptr_t *out, uint32_t *socket_of, uint32_t *n) {
	uint32_t nsock = 0;
	int st = p_amdsmi_get_socket_handles(&nsock, 0);
	if (st) return st;
	if (nsock > 64) nsock = 64;
	amdsmi_socket_handle socks[64];
	st = p_amdsmi_get_socket_handles(&nsock, socks);
	if (st) return st;
	uint32_t max = *n, k = 0;
	for (uint32_t s = 0; s < nsock; s++) {
		uint32_t np = 0;
		st = p_amdsmi_get_processor_handles(socks[s], &np, 0);
		if (st) return st;
		amdsmi_processor_handle ph[64];
		if (np > 64) np = 64;
		st = p_amdsmi_get_processor_handles(socks[s], &np, ph);
		if (st) return st;
		for (uint32_t p = 0; p < np && k < max; p++) {
			processor_type_t t = AMDSMI_PROCESSOR_TYPE_UNKNOWN;
			if (p_amdsmi_get_processor_type(ph[p], &t) || t != AMDSMI_PROCESSOR_TYPE_AMD_GPU) continue;
			out[k] = (uintptr_t)ph[p];
			socket_of[k] = s;
			k++;
		}
	}
	*n = k;
	return 0;
}

// otg_static is what a device says about itself once.
typedef struct {
	char uuid[AMDSMI_GPU_UUID_SIZE + 2];
	int st_uuid;
	amdsmi_asic_info_t asic;
	// asic_room takes what a library with a longer amdsmi_asic_info_t
	// writes past it: the 26.3 headers AMD shipped have 904 bytes, not
	// 896. Only market_name, at 0 in all, is read.
	unsigned char asic_room[128];
	int st_asic;
	amdsmi_bdf_t bdf;
	int st_bdf;
	amdsmi_driver_info_t driver;
	int st_driver;
	char compute[AMDSMI_MAX_STRING_LENGTH];
	int st_compute;
	char memory[AMDSMI_MAX_STRING_LENGTH];
	int st_memory;
	amdsmi_kfd_info_t kfd;
	int st_kfd;
} otg_static;

static void otg_read_static(uintptr_t hv, otg_static *s) {
	amdsmi_processor_handle h = (amdsmi_processor_handle)hv;
	memset(s, 0, sizeof(*s));
	unsigned int len = sizeof(s->uuid) - 1;
	s->st_uuid = OTG_CALL(amdsmi_get_gpu_device_uuid, h, &len, s->uuid);
	s->st_asic = OTG_CALL(amdsmi_get_gpu_asic_info, h, &s->asic);
	s->st_bdf = OTG_CALL(amdsmi_get_gpu_device_bdf, h, &s->bdf);
	s->st_driver = OTG_CALL(amdsmi_get_gpu_driver_info, h, &s->driver);
	s->st_compute = OTG_CALL(amdsmi_get_gpu_compute_partition, h, s->compute, sizeof(s->compute) - 1);
	s->st_memory = OTG_CALL(amdsmi_get_gpu_memory_partition, h, s->memory, sizeof(s->memory) - 1);
	s->st_kfd = OTG_CALL(amdsmi_get_gpu_kfd_info, h, &s->kfd);
}

// The calls of one reading, indexing otg_reading.st.
enum {
	OTG_ACTIVITY, OTG_VRAM_USED, OTG_VRAM_TOTAL, OTG_POWER, OTG_POWER_CAP, OTG_ENERGY,
	OTG_TEMP_EDGE, OTG_TEMP_HOTSPOT, OTG_TEMP_VRAM, OTG_CLOCK_GFX, OTG_CLOCK_MEM,
	OTG_VIOLATION, OTG_ECC_ENABLED, OTG_BAD_PAGES, OTG_BAD_PAGE_THRESHOLD, OTG_LINKS,
	OTG_PCI_THROUGHPUT, OTG_PCI_REPLAYS, OTG_PROCESSES, OTG_CALLS
};

#define OTG_ECC_BLOCKS 19
#define OTG_BAD_PAGE_RECORDS 512

// otg_xcp is the graphics activity of each compute partition (XCP) of a
// partitioned GPU, from the GPU's metrics table, which amdsmi_get_gpu_activity
// does not break down: it answers for the whole GPU, on the first partition.
// The table (2.3 to 4.7 KB by version) is read once per GPU and scrape, into this C
// memory, owned by the GPU's first partition and reused.
typedef struct {
	int st;     // amdsmi_get_gpu_metrics_info's status
	uint32_t n; // the XCPs the table describes
	// Each XCP's summed valid gfx_busy_inst entries (one per XCC of the
	// XCP: one in CPX mode, two in QPX, four in DPX) and their count;
	// a count of 0 means the XCP has no reading.
	uint64_t gfx_sum[AMDSMI_MAX_NUM_XCP];
	uint32_t gfx_n[AMDSMI_MAX_NUM_XCP];
	// m is the table in the library's layout (otg_cur).
	otg_table m;
} otg_xcp;

// otg_read_xcp reads the metrics table and sums each XCP's XCC activity.
// An entry the firmware does not fill is UINT32_MAX (the driver fills the
// table with 0xff before writing it); that and anything over 100 % is
// left out, never counted as idle. num_partition is UINT16_MAX where the
// table predates XCP statistics (gpu_metrics before v1.6: MI200).
static void otg_read_xcp(amdsmi_processor_handle h, otg_xcp *x) {
	x->n = 0;
	memset(x->gfx_sum, 0, sizeof(x->gfx_sum));
	memset(x->gfx_n, 0, sizeof(x->gfx_n));
	const otg_layout *l = otg_cur;
	if (!l) {
		x->st = AMDSMI_STATUS_NOT_SUPPORTED;
		return;
	}
	x->st = OTG_CALL(amdsmi_get_gpu_metrics_info, h, (amdsmi_gpu_metrics_t *)x->m.b);
	uint16_t np = otg_u16(&x->m, OTG_GM_NUM_PARTITION);
	if (x->st != AMDSMI_STATUS_SUCCESS || np == UINT16_MAX) return;
	x->n = np < AMDSMI_MAX_NUM_XCP ? np : AMDSMI_MAX_NUM_XCP;
	for (uint32_t p = 0; p < x->n; p++) {
		for (int c = 0; c < AMDSMI_MAX_NUM_XCC; c++) {
			uint32_t v = otg_u32(&x->m, OTG_GM_XCP_STATS + (size_t)p * l->xcp_stride + (size_t)c * sizeof(uint32_t));
			if (v > 100) continue;
			x->gfx_sum[p] += v;
			x->gfx_n[p]++;
		}
	}
}

// otg_reading is one reading of one device: each call's status, and its
// results where the status is AMDSMI_STATUS_SUCCESS.
typedef struct {
	// skip_pci_throughput leaves amdsmi_get_gpu_pci_throughput out: the
	// driver measures PCIe traffic over a window of its own (the pcie_bw
	// file), which can hold the call that long.
	int skip_pci_throughput;
	// xcp, where set (the first partition of a partitioned GPU), is read
	// in the same crossing as the rest.
	otg_xcp *xcp;
	int st[OTG_CALLS];
	amdsmi_engine_usage_t activity;
	uint64_t vram_used, vram_total;
	// power is written in the library's layout; power_now, power_avg and
	// power_limit are read out of it.
	union { amdsmi_power_info_t v25; otg_power_info26_t v26; } power;
	uint32_t power_now, power_avg, power_limit;
	amdsmi_power_cap_info_t cap;
	uint64_t energy, energy_ts;
	float energy_resolution;
	int64_t temp[3];
	amdsmi_clk_info_t clock[2];
	// violation is written in the library's layout, of which per_*
	// (processor hot, package power, socket thermal, VR thermal, HBM
	// thermal) are read out.
	union { amdsmi_violation_status_t v25; otg_violation_status26_t v26; } violation;
	uint64_t per_violation[5];
	uint64_t ecc_enabled;
	int st_ecc[OTG_ECC_BLOCKS];
	amdsmi_error_count_t ecc[OTG_ECC_BLOCKS];
	uint32_t bad_pages;
	uint32_t bad_by_status[3];
	amdsmi_retired_page_record_t bad[OTG_BAD_PAGE_RECORDS];
	uint32_t bad_threshold;
	// links is amdsmi_link_metrics_t in the library's layout (otg_cur).
	otg_table links;
	uint64_t pci_sent, pci_received, pci_max_packet;
	uint64_t pci_replays;
	uint32_t processes;
	// procs, when set, receives the processes themselves, not only
	// their count (per_process): see otg_read_processes.
	struct otg_procs *procs;
} otg_reading;

// Per-process readings (per_process), kept apart from the device's other
// figures.

// OTG_MAX_PROCS bounds the processes read per device and scrape; the
// count (otg_reading.processes) stays the library's total.
#define OTG_MAX_PROCS 128

// otg_proc is what is kept of an amdsmi_proc_info_t. AMD SMI reads the
// figures from the process's DRM fdinfo (drm-memory-vram in KiB, which it
// turns into bytes; drm-engine-gfx and drm-engine-enc, cumulative ns), or,
// where that is unreadable, VRAM from the KFD with the engines at zero.
typedef struct {
	uint32_t pid;
	uint64_t vram, gfx, enc;
} otg_proc;

typedef struct otg_procs {
	// buf is the library's list, shared by the devices of a backend:
	// an amdsmi_proc_info_t is some 700 bytes, most of it names.
	amdsmi_proc_info_t *buf;
	uint32_t n;
	// truncated is set when the device had more than OTG_MAX_PROCS.
	int truncated;
	otg_proc p[OTG_MAX_PROCS];
} otg_procs;

// otg_read_processes reads the device's processes into out, and their
// total into *total. More processes than the buffer holds is
// AMDSMI_STATUS_OUT_OF_RESOURCES with the buffer filled: a success here,
// with the list truncated.
static int otg_read_processes(amdsmi_processor_handle h, otg_procs *out, uint32_t *total) {
	uint32_t n = OTG_MAX_PROCS;
	out->n = 0;
	out->truncated = 0;
	int st = OTG_CALL(amdsmi_get_gpu_process_list, h, &n, out->buf);
	if (st == AMDSMI_STATUS_OUT_OF_RESOURCES) {
		out->truncated = 1;
		st = AMDSMI_STATUS_SUCCESS;
	}
	if (st != AMDSMI_STATUS_SUCCESS) return st;
	*total = n;
	if (n > OTG_MAX_PROCS) n = OTG_MAX_PROCS;
	for (uint32_t i = 0; i < n; i++) {
		const amdsmi_proc_info_t *s = &out->buf[i];
		out->p[i] = (otg_proc){s->pid, s->memory_usage.vram_mem, s->engine_usage.gfx, s->engine_usage.enc};
	}
	out->n = n;
	return st;
}

// otg_read reads one device: every call in one crossing from Go, so that
// a scrape costs one cgo call per device and not thirty.
static void otg_read(uintptr_t hv, otg_reading *r) {
	amdsmi_processor_handle h = (amdsmi_processor_handle)hv;
	r->st[OTG_ACTIVITY] = OTG_CALL(amdsmi_get_gpu_activity, h, &r->activity);
	if (r->xcp) otg_read_xcp(h, r->xcp);
	r->st[OTG_VRAM_USED] = OTG_CALL(amdsmi_get_gpu_memory_usage, h, AMDSMI_MEM_TYPE_VRAM, &r->vram_used);
	r->st[OTG_VRAM_TOTAL] = OTG_CALL(amdsmi_get_gpu_memory_total, h, AMDSMI_MEM_TYPE_VRAM, &r->vram_total);
	r->st[OTG_POWER] = OTG_CALL(amdsmi_get_power_info, h, &r->power.v25);
	if (otg_major >= 26) {
		r->power_now = r->power.v26.current_socket_power;
		r->power_avg = r->power.v26.average_socket_power;
		r->power_limit = r->power.v26.power_limit;
	} else {
		r->power_now = r->power.v25.current_socket_power;
		r->power_avg = r->power.v25.average_socket_power;
		r->power_limit = r->power.v25.power_limit;
	}
	r->st[OTG_POWER_CAP] = OTG_CALL(amdsmi_get_power_cap_info, h, 0, &r->cap);
	r->st[OTG_ENERGY] = OTG_CALL(amdsmi_get_energy_count, h, &r->energy, &r->energy_resolution, &r->energy_ts);
	r->st[OTG_TEMP_EDGE] = OTG_CALL(amdsmi_get_temp_metric, h, AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT, &r->temp[0]);
	r->st[OTG_TEMP_HOTSPOT] = OTG_CALL(amdsmi_get_temp_metric, h, AMDSMI_TEMPERATURE_TYPE_HOTSPOT, AMDSMI_TEMP_CURRENT, &r->temp[1]);
	r->st[OTG_TEMP_VRAM] = OTG_CALL(amdsmi_get_temp_metric, h, AMDSMI_TEMPERATURE_TYPE_VRAM, AMDSMI_TEMP_CURRENT, &r->temp[2]);
	r->st[OTG_CLOCK_GFX] = OTG_CALL(amdsmi_get_clock_info, h, AMDSMI_CLK_TYPE_GFX, &r->clock[0]);
	r->st[OTG_CLOCK_MEM] = OTG_CALL(amdsmi_get_clock_info, h, AMDSMI_CLK_TYPE_MEM, &r->clock[1]);
	r->st[OTG_VIOLATION] = OTG_CALL(amdsmi_get_violation_status, h, &r->violation.v25);
	const amdsmi_violation_status_t *v = &r->violation.v25; // the same 128 bytes in 26.x
	r->per_violation[0] = v->per_prochot_thrm;
	r->per_violation[1] = v->per_ppt_pwr;
	r->per_violation[2] = v->per_socket_thrm;
	r->per_violation[3] = v->per_vr_thrm;
	r->per_violation[4] = v->per_hbm_thrm;
	r->st[OTG_ECC_ENABLED] = OTG_CALL(amdsmi_get_gpu_ecc_enabled, h, &r->ecc_enabled);
	for (int b = 0; b < OTG_ECC_BLOCKS; b++) {
		r->st_ecc[b] = AMDSMI_STATUS_NOT_SUPPORTED;
		if (r->st[OTG_ECC_ENABLED] == AMDSMI_STATUS_SUCCESS && (r->ecc_enabled & (1ULL << b)))
			r->st_ecc[b] = OTG_CALL(amdsmi_get_gpu_ecc_count, h, (amdsmi_gpu_block_t)(1ULL << b), &r->ecc[b]);
	}
	r->bad_pages = OTG_BAD_PAGE_RECORDS;
	r->st[OTG_BAD_PAGES] = OTG_CALL(amdsmi_get_gpu_bad_page_info, h, &r->bad_pages, r->bad);
	memset(r->bad_by_status, 0, sizeof(r->bad_by_status));
	if (r->st[OTG_BAD_PAGES] == AMDSMI_STATUS_SUCCESS) {
		uint32_t n = r->bad_pages < OTG_BAD_PAGE_RECORDS ? r->bad_pages : OTG_BAD_PAGE_RECORDS;
		for (uint32_t i = 0; i < n; i++)
			if ((unsigned)r->bad[i].status < 3) r->bad_by_status[r->bad[i].status]++;
	}
	r->st[OTG_BAD_PAGE_THRESHOLD] = OTG_CALL(amdsmi_get_gpu_bad_page_threshold, h, &r->bad_threshold);
	r->st[OTG_LINKS] = otg_cur ? OTG_CALL(amdsmi_get_link_metrics, h, (amdsmi_link_metrics_t *)r->links.b) : AMDSMI_STATUS_NOT_SUPPORTED;
	r->st[OTG_PCI_THROUGHPUT] = r->skip_pci_throughput ? AMDSMI_STATUS_NOT_SUPPORTED
		: OTG_CALL(amdsmi_get_gpu_pci_throughput, h, &r->pci_sent, &r->pci_received, &r->pci_max_packet);
	r->st[OTG_PCI_REPLAYS] = OTG_CALL(amdsmi_get_gpu_pci_replay_counter, h, &r->pci_replays);
	r->processes = 0;
	r->st[OTG_PROCESSES] = r->procs ? otg_read_processes(h, r->procs, &r->processes)
		: OTG_CALL(amdsmi_get_gpu_process_list, h, &r->processes, 0);
}

#define OTG_CPER_HDRS 64
#define OTG_CPER_BUF (256 * 1024)

// otg_cper_page is one page of CPER records: each record's severity and
// AFIDs.
typedef struct {
	uint64_t cursor;
	uint64_t count;
	int severity[OTG_CPER_HDRS];
	uint32_t nafids[OTG_CPER_HDRS];
	uint64_t afids[OTG_CPER_HDRS][MAX_NUMBER_OF_AFIDS_PER_RECORD];
	amdsmi_cper_hdr_t *hdrs[OTG_CPER_HDRS];
	char data[OTG_CPER_BUF];
} otg_cper_page;

// otg_cper reads the page of CPER records from page->cursor on, and moves
// the cursor past it. It returns AMDSMI_STATUS_MORE_DATA when another page
// follows.
static int otg_cper(uintptr_t hv, otg_cper_page *page) {
	amdsmi_processor_handle h = (amdsmi_processor_handle)hv;
	if (!p_amdsmi_get_gpu_cper_entries) return AMDSMI_STATUS_FAIL_LOAD_SYMBOL;
	uint64_t size = OTG_CPER_BUF;
	page->count = OTG_CPER_HDRS;
	uint32_t mask = (1u << AMDSMI_CPER_SEV_NON_FATAL_UNCORRECTED) | (1u << AMDSMI_CPER_SEV_FATAL) | (1u << AMDSMI_CPER_SEV_NON_FATAL_CORRECTED);
	int st = p_amdsmi_get_gpu_cper_entries(h, mask, page->data, &size, page->hdrs, &page->count, &page->cursor);
	if (otg_more_data(st)) st = AMDSMI_STATUS_MORE_DATA;
	if (st != AMDSMI_STATUS_SUCCESS && st != AMDSMI_STATUS_MORE_DATA) {
		page->count = 0;
		return st;
	}
	if (page->count > OTG_CPER_HDRS) page->count = OTG_CPER_HDRS;
	for (uint64_t i = 0; i < page->count; i++) {
		amdsmi_cper_hdr_t *hdr = page->hdrs[i];
		page->severity[i] = hdr ? (int)hdr->error_severity : -1;
		page->nafids[i] = 0;
		if (!hdr || !p_amdsmi_get_afids_from_cper) continue;
		uint32_t n = MAX_NUMBER_OF_AFIDS_PER_RECORD;
		if (p_amdsmi_get_afids_from_cper((char *)hdr, hdr->record_length, page->afids[i], &n) == AMDSMI_STATUS_SUCCESS)
			page->nafids[i] = n < MAX_NUMBER_OF_AFIDS_PER_RECORD ? n : MAX_NUMBER_OF_AFIDS_PER_RECORD;
	}
	return st;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Status is an amdsmi_status_t.
type Status int

// The statuses the backend tells apart.
const (
	statusSuccess          Status = C.AMDSMI_STATUS_SUCCESS
	statusNotSupported     Status = C.AMDSMI_STATUS_NOT_SUPPORTED
	statusFailLoadSymbol   Status = C.AMDSMI_STATUS_FAIL_LOAD_SYMBOL
	statusNotFound         Status = C.AMDSMI_STATUS_NOT_FOUND
	statusDriverNotLoaded  Status = C.AMDSMI_STATUS_DRIVER_NOT_LOADED
	statusMoreData         Status = C.AMDSMI_STATUS_MORE_DATA
	statusNoData           Status = C.AMDSMI_STATUS_NO_DATA
	statusNotYetImplmented Status = C.AMDSMI_STATUS_NOT_YET_IMPLEMENTED
)

// lost reports whether a status says the device or the driver is gone:
// the backend then re-enumerates rather than leave one figure out.
func (s Status) lost() bool { return s == statusNotFound || s == statusDriverNotLoaded }

// unsupported reports whether a status says the GPU or the library does
// not have the figure at all, which is not a failure worth a warning.
func (s Status) unsupported() bool {
	return s == statusNotSupported || s == statusFailLoadSymbol || s == statusNotYetImplmented || s == statusNoData
}

func (s Status) Error() string {
	if name := C.GoString(C.otg_status_string(C.int(s))); name != "" {
		return fmt.Sprintf("%s (%d)", name, int(s))
	}
	return fmt.Sprintf("amdsmi status %d", int(s))
}

// ABIMajor is the major version of the amdsmi.h this package is compiled
// against (25), and MaxABIMajor the newest it reads (26, through the
// mirrors of lib.go's C part). AMD SMI bumps the major version whenever its
// ABI changes (the header says so), so a library of another major version
// may lay out the structures read here differently: it is refused rather
// than misread.
const (
	ABIMajor    = C.AMDSMI_LIB_VERSION_MAJOR
	MaxABIMajor = 26
)

// Version is the library's version.
type Version struct{ Major, Minor, Release int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Release) }

// The library is process-wide: one dlopen, one set of function pointers.
// amdsmi_init and amdsmi_shut_down are reference counted by the library,
// so that each backend initialises and shuts down on its own.
var (
	libMu   sync.Mutex
	libPath string
)

// open loads the library at path, once per path.
func open(path string) error {
	libMu.Lock()
	defer libMu.Unlock()
	if libPath == path {
		return nil
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	switch C.otg_open(cpath) {
	case 0:
		libPath = path
		return nil
	case 1:
		// dlerror names the library, in most cases with the path tried.
		msg := C.GoString(C.otg_open_err())
		if !strings.Contains(msg, path) {
			msg = path + ": " + msg
		}
		return fmt.Errorf("%s (is ROCm's amd-smi library installed, and library_path right?)", msg)
	default:
		return fmt.Errorf("open %s: not AMD SMI: amdsmi_init or another base function is missing", path)
	}
}

func libInit() error {
	if st := Status(C.otg_init()); st != statusSuccess {
		return fmt.Errorf("amdsmi_init: %w", st)
	}
	return nil
}

func libShutDown() error {
	if st := Status(C.otg_shut_down()); st != statusSuccess {
		return fmt.Errorf("amdsmi_shut_down: %w", st)
	}
	return nil
}

func libVersion() (Version, error) {
	var v [3]C.uint32_t
	if st := Status(C.otg_version(&v[0])); st != statusSuccess {
		return Version{}, fmt.Errorf("amdsmi_get_lib_version: %w", st)
	}
	return Version{int(v[0]), int(v[1]), int(v[2])}, nil
}

// checkVersion refuses a library whose ABI this build does not read, and
// otherwise makes the calls use its layout.
func checkVersion(v Version) error {
	switch {
	case v.Major < ABIMajor:
		return fmt.Errorf("libamd_smi %v is too old: this build reads AMD SMI %d.x to %d.x (ROCm 6.4 to 7.x)", v, ABIMajor, MaxABIMajor)
	case v.Major > MaxABIMajor:
		return fmt.Errorf("libamd_smi %v has a newer ABI than this build reads (AMD SMI %d.x to %d.x): its structures may differ", v, ABIMajor, MaxABIMajor)
	}
	C.otg_set_version(C.int(v.Major), C.int(v.Minor))
	return nil
}

// layoutKnown reports whether this package knows the library's layout of
// amdsmi_gpu_metrics_t and amdsmi_link_metrics_t, which changes between
// minor versions (see the table in lib.go's C part): where it does not,
// neither is read.
func layoutKnown() bool { return C.otg_known_layout() != 0 }

// maxProcessors bounds the GPUs and partitions enumerated: 64, eight GPUs
// in CPX mode with room to spare.
const maxProcessors = 64

// handle is an amdsmi_processor_handle, kept as an integer: it is the
// library's, not memory Go may look into.
type handle uintptr

// processors lists the AMD GPU processors, with each one's socket index.
func processors() ([]handle, []int, error) {
	var hs [maxProcessors]C.uintptr_t
	var socks [maxProcessors]C.uint32_t
	n := C.uint32_t(maxProcessors)
	if st := Status(C.otg_processors(&hs[0], &socks[0], &n)); st != statusSuccess {
		return nil, nil, fmt.Errorf("enumerate processors: %w", st)
	}
	out := make([]handle, int(n))
	sock := make([]int, int(n))
	for i := range out {
		out[i] = handle(hs[i])
		sock[i] = int(socks[i])
	}
	return out, sock, nil
}

// identity is what a device says about itself once.
type identity struct {
	UUID, Model, BDF, Driver, Compute, Memory string
	PartitionID                               int
}

var errNoUUID = errors.New("amdsmi_get_gpu_device_uuid failed")

func readIdentity(h handle) (identity, error) {
	var s C.otg_static
	C.otg_read_static(C.uintptr_t(h), &s)
	if st := Status(s.st_uuid); st != statusSuccess {
		if st.lost() {
			return identity{}, fmt.Errorf("%w: %w", errNoUUID, st)
		}
		return identity{}, fmt.Errorf("%w: %w", errNoUUID, st)
	}
	id := identity{UUID: C.GoString(&s.uuid[0]), PartitionID: -1}
	if s.st_asic == 0 {
		id.Model = C.GoString(&s.asic.market_name[0])
	}
	if s.st_bdf == 0 {
		raw := *(*uint64)(unsafe.Pointer(&s.bdf))
		// amdsmi_bdf_t: function 3 bits, device 5, bus 8, domain 48.
		id.BDF = fmt.Sprintf("%04x:%02x:%02x.%x", raw>>16&0xffff, raw>>8&0xff, raw>>3&0x1f, raw&0x7)
	}
	if s.st_driver == 0 {
		id.Driver = C.GoString(&s.driver.driver_version[0])
	}
	if s.st_compute == 0 {
		id.Compute = C.GoString(&s.compute[0])
	}
	if s.st_memory == 0 {
		id.Memory = C.GoString(&s.memory[0])
	}
	if s.st_kfd == 0 && s.kfd.current_partition_id != 0xffffffff {
		id.PartitionID = int(s.kfd.current_partition_id)
	}
	return id, nil
}

// reading is C memory for one device's reading, reused from scrape to
// scrape.
type reading struct{ r *C.otg_reading }

func newReading(skipPCIThroughput bool) reading {
	r := reading{(*C.otg_reading)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_reading{}))))}
	if skipPCIThroughput {
		r.r.skip_pci_throughput = 1
	}
	return r
}

func (r reading) free() {
	if r.r.xcp != nil {
		C.free(unsafe.Pointer(r.r.xcp))
	}
	if r.r.procs != nil {
		C.free(unsafe.Pointer(r.r.procs))
	}
	C.free(unsafe.Pointer(r.r))
}

// readPartitions makes the reading read its GPU's metrics table too, for
// the activity of each of its partitions.
func (r reading) readPartitions() {
	r.r.xcp = (*C.otg_xcp)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_xcp{}))))
}

// partitionStatus is amdsmi_get_gpu_metrics_info's status in a reading
// made with readPartitions.
func (r reading) partitionStatus() Status { return Status(r.r.xcp.st) }

// partitionActivity returns the mean graphics activity of XCP i's XCCs
// in percent, and false where the table has no valid entry for it.
func (r reading) partitionActivity(i int) (float64, bool) {
	x := r.r.xcp
	if i < 0 || i >= int(x.n) || x.gfx_n[i] == 0 {
		return 0, false
	}
	return float64(x.gfx_sum[i]) / float64(x.gfx_n[i]), true
}

// procBuffer is C memory for one amdsmi_get_gpu_process_list, which the
// devices of a backend share: they are read one after the other.
type procBuffer struct{ p *C.amdsmi_proc_info_t }

func newProcBuffer() procBuffer {
	return procBuffer{(*C.amdsmi_proc_info_t)(C.calloc(C.OTG_MAX_PROCS, C.size_t(unsafe.Sizeof(C.amdsmi_proc_info_t{}))))}
}

func (b procBuffer) free() { C.free(unsafe.Pointer(b.p)) }

// readProcesses makes the reading list the device's processes, into buf,
// and not only count them.
func (r reading) readProcesses(buf procBuffer) {
	if r.r.procs == nil {
		r.r.procs = (*C.otg_procs)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_procs{}))))
	}
	r.r.procs.buf = buf.p
}

// maxProcesses bounds the processes read per device and scrape.
const maxProcesses = C.OTG_MAX_PROCS

// procInfo is one process of a reading: VRAM in bytes, the graphics and
// encoder engines' busy time in ns since the process opened the device.
type procInfo struct {
	pid            uint32
	vram, gfx, enc uint64
}

// processList appends the reading's processes to out, and says whether
// the device had more than it holds.
func (r reading) processList(out []procInfo) ([]procInfo, bool) {
	ps := r.r.procs
	if ps == nil {
		return out, false
	}
	for i := range min(int(ps.n), maxProcesses) {
		p := &ps.p[i]
		out = append(out, procInfo{pid: uint32(p.pid), vram: uint64(p.vram), gfx: uint64(p.gfx), enc: uint64(p.enc)})
	}
	return out, ps.truncated != 0
}

func (r reading) read(h handle) { C.otg_read(C.uintptr_t(h), r.r) }

// cperPage is C memory for one page of CPER records.
type cperPage struct{ p *C.otg_cper_page }

func newCPERPage() cperPage {
	return cperPage{(*C.otg_cper_page)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_cper_page{}))))}
}

func (p cperPage) free() { C.free(unsafe.Pointer(p.p)) }

// The calls of one reading, as otg_reading.st indexes them.
const (
	callActivity         = C.OTG_ACTIVITY
	callVRAMUsed         = C.OTG_VRAM_USED
	callVRAMTotal        = C.OTG_VRAM_TOTAL
	callPower            = C.OTG_POWER
	callPowerCap         = C.OTG_POWER_CAP
	callEnergy           = C.OTG_ENERGY
	callTempEdge         = C.OTG_TEMP_EDGE
	callTempHotspot      = C.OTG_TEMP_HOTSPOT
	callTempVRAM         = C.OTG_TEMP_VRAM
	callClockGFX         = C.OTG_CLOCK_GFX
	callClockMem         = C.OTG_CLOCK_MEM
	callViolation        = C.OTG_VIOLATION
	callECCEnabled       = C.OTG_ECC_ENABLED
	callBadPages         = C.OTG_BAD_PAGES
	callBadPageThreshold = C.OTG_BAD_PAGE_THRESHOLD
	callLinks            = C.OTG_LINKS
	callPCIThroughput    = C.OTG_PCI_THROUGHPUT
	callPCIReplays       = C.OTG_PCI_REPLAYS
	callProcesses        = C.OTG_PROCESSES
	numCalls             = C.OTG_CALLS
)

func (r reading) status(call int) Status { return Status(r.r.st[call]) }

// lostError returns the first status of the reading that says the device
// or the driver is gone, or nil.
func (r reading) lostError() error {
	for i := range numCalls {
		if st := Status(r.r.st[i]); st.lost() {
			return st
		}
	}
	if r.r.xcp != nil {
		if st := r.partitionStatus(); st.lost() {
			return st
		}
	}
	return nil
}

func (r reading) activity() (gfx, umc, mm uint32) {
	a := &r.r.activity
	return uint32(a.gfx_activity), uint32(a.umc_activity), uint32(a.mm_activity)
}

func (r reading) vramUsed() uint64  { return uint64(r.r.vram_used) }
func (r reading) vramTotal() uint64 { return uint64(r.r.vram_total) }

// power returns the current and average socket power and the power
// limit, in W.
func (r reading) power() (current, average, limit uint32) {
	return uint32(r.r.power_now), uint32(r.r.power_avg), uint32(r.r.power_limit)
}

func (r reading) powerCap() uint64 { return uint64(r.r.cap.power_cap) }

func (r reading) energy() (uint64, float64) {
	return uint64(r.r.energy), float64(r.r.energy_resolution)
}

func (r reading) temp(i int) int64   { return int64(r.r.temp[i]) }
func (r reading) clock(i int) uint32 { return uint32(r.r.clock[i].clk) }

func (r reading) violations() [5]uint64 {
	v := &r.r.per_violation
	return [5]uint64{uint64(v[0]), uint64(v[1]), uint64(v[2]), uint64(v[3]), uint64(v[4])}
}

// ecc returns block bit's status and its correctable, uncorrectable and
// deferred counts.
func (r reading) ecc(bit int) (Status, [3]uint64) {
	c := &r.r.ecc[bit]
	return Status(r.r.st_ecc[bit]), [3]uint64{uint64(c.correctable_count), uint64(c.uncorrectable_count), uint64(c.deferred_count)}
}

func (r reading) badPages() [3]uint32 {
	b := r.r.bad_by_status
	return [3]uint32{uint32(b[0]), uint32(b[1]), uint32(b[2])}
}

func (r reading) badPageThreshold() uint32 { return uint32(r.r.bad_threshold) }

// xgmiLinks appends the XGMI links of the reading to out.
func (r reading) xgmiLinks(out []gpu.XGMILink) []gpu.XGMILink {
	var links [C.OTG_MAX_LINKS]C.otg_link
	var index [C.OTG_MAX_LINKS]C.int
	n := int(C.otg_links(&r.r.links, &links[0], &index[0]))
	for i := range n {
		l := &links[i]
		out = append(out, gpu.XGMILink{Index: int(index[i]), ReadKB: uint64(l.read), WriteKB: uint64(l.write), MaxBandwidthGbps: float64(l.max_bandwidth)})
	}
	return out
}

func (r reading) pciThroughput() (sent, received uint64) {
	return uint64(r.r.pci_sent), uint64(r.r.pci_received)
}

func (r reading) pciReplays() uint64 { return uint64(r.r.pci_replays) }
func (r reading) processes() uint32  { return uint32(r.r.processes) }

func cU64(v uint64) C.uint64_t { return C.uint64_t(v) }

func cperRead(h handle, p cperPage) int { return int(C.otg_cper(C.uintptr_t(h), p.p)) }

// records appends the page's records to out.
func (p cperPage) records(out []gpu.CPERRecord) []gpu.CPERRecord {
	n := int(p.p.count)
	for i := range n {
		rec := gpu.CPERRecord{Severity: cperSeverity(int(p.p.severity[i]))}
		for j := range int(p.p.nafids[i]) {
			rec.AFIDs = append(rec.AFIDs, uint64(p.p.afids[i][j]))
		}
		out = append(out, rec)
	}
	return out
}

// cperSeverity names an amdsmi_cper_sev_t; an unknown one counts as
// fatal, the severity that asks for attention.
func cperSeverity(s int) string {
	switch s {
	case C.AMDSMI_CPER_SEV_NON_FATAL_UNCORRECTED:
		return gpu.CPERNonFatalUncorrected
	case C.AMDSMI_CPER_SEV_NON_FATAL_CORRECTED:
		return gpu.CPERNonFatalCorrected
	default:
		return gpu.CPERFatal
	}
}
