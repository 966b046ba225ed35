// lib_read.h is the second part of lib.go's cgo preamble, included there
// only, after lib_abi.h, whose function pointers and layouts it uses. It
// enumerates the devices and reads them in one crossing from Go each.

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
