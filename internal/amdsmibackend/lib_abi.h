// lib_abi.h is the first part of lib.go's cgo preamble, and is included
// there only: its static functions and variables (the library's handle,
// its function pointers, its version and layout) must be in that one
// translation unit. It opens the library and knows its versions' layouts.

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
