/*
 * A stand-in for NVIDIA's libdcgm.so.4, for tests on machines without GPUs.
 *
 * It exports the DCGM C functions that the dcgm receiver's code path calls
 * (through go-dcgm, and dcgmEntitiesGetLatestValues directly), built against
 * go-dcgm's own copies of DCGM's headers, so that the real go-dcgm code runs
 * against canned GPUs. It also serves what NVIDIA's dcgm-exporter calls at
 * start-up and per scrape, so that the benchmark (internal/tools/gpubench)
 * runs the real dcgm-exporter against the same GPUs.
 *
 * Behaviour is read, on every call, from the file named by the environment
 * variable STANDIN_DCGM_STATE: one "key value" per line.
 *   gpus N        number of GPUs (default 2, at most DCGM_MAX_NUM_DEVICES)
 *   noprof I      GPU I has no profiling support (a T4); may repeat
 *   mig 1         GPU 0 carries one MIG instance (GPU_I 0)
 *   connected 0   nv-hostengine is unreachable: every call fails with
 *                 DCGM_ST_CONNECTION_NOT_VALID
 *   epoch N       driver generation; counters restart when it changes
 *   stale 1       values carry timestamps an hour old
 *   xid G CODE T  an XID event CODE on GPU G at time T (usec since 1970);
 *                 the latest value of DCGM_FI_DEV_XID_ERRORS is then the last
 *                 such CODE (in file order) up to the read time
 *   recovery G A  GPU G's recovery action (DCGM_FI_DEV_GPU_RECOVERY_ACTION)
 *                 is A, an nvmlDeviceGpuRecoveryAction_t (default 0, none);
 *                 A < 0 is a driver that predates the field: the blank
 *                 value DCGM_INT64_NOT_SUPPORTED
 *   diagfail G    GPU G fails dcgmRunDiagnostic (pending row remappings, as
 *                 the software tests of level 1 report); may repeat. The
 *                 others pass.
 *   switches N    number of NVSwitches (default 0)
 *   health G SYS RES
 *                 dcgmHealthCheck reports an incident on GPU G: SYS is one
 *                 dcgmHealthSystems_t bit (decimal), RES a
 *                 dcgmHealthWatchResults_t (10 warn, 20 fail); may repeat
 *   switchhealth S SYS RES
 *                 likewise on NVSwitch S
 *   nohealth 1    dcgmHealthSet fails (a host engine without its health
 *                 module): DCGM_ST_MODULE_NOT_LOADED
 *
 * The latest-value reads accept only the handle of the current connection
 * (dcgmConnect_v2 or dcgmStartEmbedded), so that a caller passing DCGM its
 * own handle (the receiver reads values without go-dcgm) is checked.
 *
 * If STANDIN_DCGM_WATCHLOG names a file, every dcgmWatchFields call appends
 * one line to it: "watch FREQ_USEC ID ID ...", the field IDs of the group
 * watched, so that tests can check what the receiver asks DCGM to sample.
 * Likewise STANDIN_DCGM_DIAGLOG for dcgmRunDiagnostic: "diag LEVEL GPU GPU
 * ...", the level asked for and the GPUs of the group diagnosed. And
 * STANDIN_DCGM_HEALTHLOG for the health calls (libdcgm_health.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "dcgm_agent.h"
#include "dcgm_errors.h"
#include "dcgm_structs.h"

#define MAX_XIDS 64
#define MAX_HEALTH 64
#define MAX_SWITCHES 16

struct state {
	int gpus;
	int noprof[DCGM_MAX_NUM_DEVICES];
	int mig;
	int connected;
	long long epoch;
	int stale;
	int nxids;
	struct { int gpu; long long code, ts; } xids[MAX_XIDS];
	long long recovery[DCGM_MAX_NUM_DEVICES];
	int diagfail[DCGM_MAX_NUM_DEVICES];
	int switches;
	int nohealth;
	int nhealth;
	struct { int group; unsigned int entity, system, result; } health[MAX_HEALTH];
};

static long long calls;      /* device-field reads, a stand-in for time */
static long long epoch_seen; /* epoch of the last read */
static long long epoch_calls;
static uintptr_t next_handle = 1;
static uintptr_t conn_handle; /* the connection's handle, 0 when none */

/* Field groups created, for the watch log. */
#define MAX_FGROUPS 256
static struct {
	uintptr_t handle;
	int n;
	unsigned short ids[DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP];
} fgroups[MAX_FGROUPS];
static int nfgroups;

/* GPU groups created and the GPUs added to each, for the diagnostic. */
#define MAX_GROUPS 64
static struct {
	uintptr_t handle;
	int n;
	unsigned int gpus[DCGM_MAX_NUM_DEVICES];
	int nsw;
	unsigned int switches[MAX_SWITCHES];
	unsigned int health; /* dcgmHealthSet's systems */
} groups[MAX_GROUPS];
static int ngroups;

static long long now_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000000LL + tv.tv_usec;
}

static void load(struct state *s)
{
	memset(s, 0, sizeof(*s));
	s->gpus = 2;
	s->connected = 1;
	s->epoch = 1;
	const char *path = getenv("STANDIN_DCGM_STATE");
	if (!path)
		return;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char key[32];
	while (fscanf(f, "%31s", key) == 1) {
		long long a = 0, b = 0, c = 0;
		if (!strcmp(key, "xid")) {
			if (fscanf(f, "%lld %lld %lld", &a, &b, &c) == 3 && s->nxids < MAX_XIDS) {
				s->xids[s->nxids].gpu = (int)a;
				s->xids[s->nxids].code = b;
				s->xids[s->nxids].ts = c;
				s->nxids++;
			}
			continue;
		}
		if (!strcmp(key, "health") || !strcmp(key, "switchhealth")) {
			if (fscanf(f, "%lld %lld %lld", &a, &b, &c) == 3 && s->nhealth < MAX_HEALTH) {
				s->health[s->nhealth].group = key[0] == 'h' ? DCGM_FE_GPU : DCGM_FE_SWITCH;
				s->health[s->nhealth].entity = (unsigned int)a;
				s->health[s->nhealth].system = (unsigned int)b;
				s->health[s->nhealth].result = (unsigned int)c;
				s->nhealth++;
			}
			continue;
		}
		if (!strcmp(key, "recovery")) {
			if (fscanf(f, "%lld %lld", &a, &b) == 2 && a >= 0 && a < DCGM_MAX_NUM_DEVICES)
				s->recovery[a] = b;
			continue;
		}
		if (fscanf(f, "%lld", &a) != 1)
			break;
		if (!strcmp(key, "gpus"))
			s->gpus = a > DCGM_MAX_NUM_DEVICES ? DCGM_MAX_NUM_DEVICES : (int)a;
		else if (!strcmp(key, "noprof") && a >= 0 && a < DCGM_MAX_NUM_DEVICES)
			s->noprof[a] = 1;
		else if (!strcmp(key, "mig"))
			s->mig = (int)a;
		else if (!strcmp(key, "connected"))
			s->connected = (int)a;
		else if (!strcmp(key, "epoch"))
			s->epoch = a;
		else if (!strcmp(key, "stale"))
			s->stale = (int)a;
		else if (!strcmp(key, "diagfail") && a >= 0 && a < DCGM_MAX_NUM_DEVICES)
			s->diagfail[a] = 1;
		else if (!strcmp(key, "switches"))
			s->switches = a > MAX_SWITCHES ? MAX_SWITCHES : (int)a;
		else if (!strcmp(key, "nohealth"))
			s->nohealth = (int)a;
	}
	fclose(f);
}

#define CONNECTED(s)                                   \
	do {                                               \
		load(&s);                                      \
		if (!s.connected)                              \
			return DCGM_ST_CONNECTION_NOT_VALID;       \
	} while (0)

const char *errorString(dcgmReturn_t result)
{
	switch (result) {
	case DCGM_ST_OK:
		return "Success";
	case DCGM_ST_CONNECTION_NOT_VALID:
		return "The connection to the host engine is not valid any longer";
	case DCGM_ST_NOT_SUPPORTED:
		return "This request is not supported";
	case DCGM_ST_BADPARAM:
		return "Bad parameter passed to function";
	default:
		return "Unknown error";
	}
}

dcgmReturn_t dcgmInit(void) { return DCGM_ST_OK; }
dcgmReturn_t dcgmShutdown(void) { return DCGM_ST_OK; }

dcgmReturn_t dcgmConnect_v2(const char *addr, dcgmConnectV2Params_t *params, dcgmHandle_t *h)
{
	struct state s;
	(void)addr;
	(void)params;
	CONNECTED(s);
	*h = (dcgmHandle_t)next_handle++;
	conn_handle = (uintptr_t)*h;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmDisconnect(dcgmHandle_t h)
{
	struct state s;
	if ((uintptr_t)h == conn_handle)
		conn_handle = 0;
	CONNECTED(s);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmStartEmbedded(dcgmOperationMode_t mode, dcgmHandle_t *h)
{
	(void)mode;
	*h = (dcgmHandle_t)next_handle++;
	conn_handle = (uintptr_t)*h;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t h)
{
	if ((uintptr_t)h == conn_handle)
		conn_handle = 0;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t h, unsigned int ids[DCGM_MAX_NUM_DEVICES], int *count)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	for (int i = 0; i < s.gpus; i++)
		ids[i] = (unsigned int)i;
	*count = s.gpus;
	return DCGM_ST_OK;
}

static void gpu_uuid(char *dst, size_t n, int gpu)
{
	snprintf(dst, n, "GPU-5ca1ab1e-0000-4000-8000-%012d", gpu);
}

static void pci_bus_id(char *dst, size_t n, int gpu)
{
	snprintf(dst, n, "00000000:%02X:00.0", 0x18 + 0x10 * gpu);
}

dcgmReturn_t dcgmGetGpuInstanceHierarchy(dcgmHandle_t h, dcgmMigHierarchy_v2 *hier)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	hier->count = 0;
	if (!s.mig)
		return DCGM_ST_OK;
	dcgmMigHierarchyInfo_v2 *e = &hier->entityList[0];
	memset(e, 0, sizeof(*e));
	e->entity.entityGroupId = DCGM_FE_GPU_I;
	e->entity.entityId = 0;
	e->parent.entityGroupId = DCGM_FE_GPU;
	e->parent.entityId = 0;
	gpu_uuid(e->info.gpuUuid, sizeof(e->info.gpuUuid), 0);
	e->info.nvmlGpuIndex = 0;
	e->info.nvmlInstanceId = 1;
	e->info.nvmlComputeInstanceId = 0;
	e->info.nvmlMigProfileId = 19;
	e->info.nvmlProfileSlices = 1;
	hier->count = 1;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmProfGetSupportedMetricGroups(dcgmHandle_t h, dcgmProfGetMetricGroups_t *g)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	if (g->gpuId >= (unsigned int)s.gpus)
		return DCGM_ST_BADPARAM;
	if (s.noprof[g->gpuId])
		return DCGM_ST_PROFILING_NOT_SUPPORTED;
	g->numMetricGroups = 1;
	g->metricGroups[0].majorId = 1;
	g->metricGroups[0].minorId = 0;
	g->metricGroups[0].numFieldIds = 12;
	for (int i = 0; i < 12; i++)
		g->metricGroups[0].fieldIds[i] = (unsigned short)(1001 + i);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupCreate(dcgmHandle_t h, dcgmGroupType_t type, const char *name, dcgmGpuGrp_t *id)
{
	struct state s;
	(void)h;
	(void)type;
	(void)name;
	CONNECTED(s);
	*id = (dcgmGpuGrp_t)next_handle++;
	if (ngroups < MAX_GROUPS) {
		groups[ngroups].handle = (uintptr_t)*id;
		groups[ngroups].n = 0;
		groups[ngroups].nsw = 0;
		groups[ngroups].health = 0;
		ngroups++;
	}
	return DCGM_ST_OK;
}

static int group_index(dcgmGpuGrp_t g)
{
	for (int i = 0; i < ngroups; i++)
		if (groups[i].handle == (uintptr_t)g)
			return i;
	return -1;
}

dcgmReturn_t dcgmGroupAddEntity(dcgmHandle_t h, dcgmGpuGrp_t g, dcgm_field_entity_group_t eg, dcgm_field_eid_t e)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	int i = group_index(g);
	if (eg == DCGM_FE_GPU && i >= 0 && groups[i].n < DCGM_MAX_NUM_DEVICES)
		groups[i].gpus[groups[i].n++] = e;
	if (eg == DCGM_FE_SWITCH && e >= (unsigned int)s.switches)
		return DCGM_ST_BADPARAM;
	if (eg == DCGM_FE_SWITCH && i >= 0 && groups[i].nsw < MAX_SWITCHES)
		groups[i].switches[groups[i].nsw++] = e;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupDestroy(dcgmHandle_t h, dcgmGpuGrp_t g)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	int i = group_index(g);
	if (i >= 0)
		groups[i] = groups[--ngroups];
	return DCGM_ST_OK;
}

/* dcgmRunDiagnostic answers as DCGM 4.2+ does (response version 12): one
 * software-test result per GPU of the group, pass or, for a GPU marked
 * diagfail, fail with an error naming it. */
dcgmReturn_t dcgmRunDiagnostic(dcgmHandle_t h, dcgmGpuGrp_t g, dcgmDiagnosticLevel_t level, dcgmDiagResponse_v12 *r)
{
	struct state s;
	unsigned int gpus[DCGM_MAX_NUM_DEVICES];
	int n = 0;
	(void)h;
	CONNECTED(s);
	if (r->version != dcgmDiagResponse_version12)
		return DCGM_ST_VER_MISMATCH;
	if (level != DCGM_DIAG_LVL_SHORT && level != DCGM_DIAG_LVL_MED && level != DCGM_DIAG_LVL_LONG &&
	    level != DCGM_DIAG_LVL_XLONG)
		return DCGM_ST_BADPARAM;
	if ((uintptr_t)g == DCGM_GROUP_ALL_GPUS) {
		for (n = 0; n < s.gpus; n++)
			gpus[n] = (unsigned int)n;
	} else {
		int i = group_index(g);
		if (i < 0)
			return DCGM_ST_NOT_CONFIGURED;
		for (int j = 0; j < groups[i].n; j++) {
			if (groups[i].gpus[j] >= (unsigned int)s.gpus)
				return DCGM_ST_BADPARAM;
			gpus[n++] = groups[i].gpus[j];
		}
	}
	const char *path = getenv("STANDIN_DCGM_DIAGLOG");
	if (path) {
		FILE *f = fopen(path, "a");
		if (!f)
			return DCGM_ST_GENERIC_ERROR;
		fprintf(f, "diag %d", (int)level);
		for (int i = 0; i < n; i++)
			fprintf(f, " %u", gpus[i]);
		fputc('\n', f);
		fclose(f);
	}
	unsigned int version = r->version;
	memset(r, 0, sizeof(*r));
	r->version = version;
	r->numTests = 1;
	r->numEntities = (unsigned short)n;
	r->numResults = (unsigned short)n;
	for (int i = 0; i < n; i++) {
		dcgmGroupEntityPair_t e = {DCGM_FE_GPU, gpus[i]};
		r->entities[i].entity = e;
		snprintf(r->entities[i].serialNum, sizeof(r->entities[i].serialNum), "16520000%05u", gpus[i]);
		r->results[i].entity = e;
		r->results[i].testId = DCGM_SOFTWARE_INDEX;
		r->results[i].result = s.diagfail[gpus[i]] ? DCGM_DIAG_RESULT_FAIL : DCGM_DIAG_RESULT_PASS;
		if (s.diagfail[gpus[i]] && r->numErrors < DCGM_DIAG_RESPONSE_ERRORS_MAX) {
			dcgmDiagError_v1 *err = &r->errors[r->numErrors++];
			err->entity = e;
			err->testId = DCGM_SOFTWARE_INDEX;
			err->code = DCGM_FR_PENDING_ROW_REMAP;
			snprintf(err->msg, sizeof(err->msg), DCGM_FR_PENDING_ROW_REMAP_MSG, gpus[i]);
		}
	}
	snprintf(r->dcgmVersion, sizeof(r->dcgmVersion), "4.2.3");
	snprintf(r->driverVersion, sizeof(r->driverVersion), "550.54.15");
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t h, int n, const unsigned short *ids, const char *name, dcgmFieldGrp_t *id)
{
	struct state s;
	(void)h;
	(void)ids;
	(void)name;
	CONNECTED(s);
	if (n <= 0 || n > DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP)
		return DCGM_ST_BADPARAM;
	*id = (dcgmFieldGrp_t)next_handle++;
	if (nfgroups < MAX_FGROUPS) {
		fgroups[nfgroups].handle = (uintptr_t)*id;
		fgroups[nfgroups].n = n;
		memcpy(fgroups[nfgroups].ids, ids, (size_t)n * sizeof(*ids));
		nfgroups++;
	}
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t h, dcgmFieldGrp_t id)
{
	struct state s;
	(void)h;
	(void)id;
	CONNECTED(s);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t h, dcgmGpuGrp_t g, dcgmFieldGrp_t fg, long long freq, double age, int samples)
{
	struct state s;
	(void)h;
	(void)g;
	(void)age;
	(void)samples;
	CONNECTED(s);
	const char *path = getenv("STANDIN_DCGM_WATCHLOG");
	if (!path)
		return DCGM_ST_OK;
	FILE *f = fopen(path, "a");
	if (!f)
		return DCGM_ST_GENERIC_ERROR;
	fprintf(f, "watch %lld", freq);
	for (int i = 0; i < nfgroups; i++) {
		if (fgroups[i].handle != (uintptr_t)fg)
			continue;
		for (int j = 0; j < fgroups[i].n; j++)
			fprintf(f, " %u", fgroups[i].ids[j]);
	}
	fputc('\n', f);
	fclose(f);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmUpdateAllFields(dcgmHandle_t h, int wait)
{
	struct state s;
	(void)h;
	(void)wait;
	CONNECTED(s);
	return DCGM_ST_OK;
}

static int is_double(unsigned short id)
{
	return id == 155 || id == 164 || (id >= 1001 && id <= 1008);
}

/* A value as the stand-in computes it, before it is copied into one of
 * DCGM's value structs (v1 or v2, which differ in their headers). */
struct val {
	int status;
	long long ts;
	unsigned short type;
	long long i64;
	double dbl;
	char str[64];
};

/* not_supported marks a field the GPU does not support, as DCGM does: the
 * status, and the value set to DCGM's NOT_SUPPORTED blank, which is what a
 * caller that reads the value without the status (dcgm-exporter) skips. */
static void not_supported(struct val *v)
{
	v->status = DCGM_ST_NOT_SUPPORTED;
	v->i64 = DCGM_INT64_NOT_SUPPORTED;
	v->dbl = DCGM_FP64_NOT_SUPPORTED;
}

/* value computes one field of one entity. Values are simple functions of
 * the GPU, the field and the read count, so that tests can predict them. */
static void value(const struct state *s, struct val *v, int gpu, int mig, unsigned short id, long long ts)
{
	v->status = DCGM_ST_OK;
	v->ts = s->stale ? ts - 3600LL * 1000000LL : ts;
	v->type = is_double(id) ? DCGM_FT_DOUBLE : DCGM_FT_INT64;
	v->i64 = 0;
	v->dbl = 0;
	long long n = epoch_calls;
	switch (id) {
	case 1: /* driver version */
		v->type = DCGM_FT_STRING;
		snprintf(v->str, sizeof(v->str), "550.54.15");
		return;
	case 50: /* name */
		v->type = DCGM_FT_STRING;
		snprintf(v->str, sizeof(v->str), "%s", s->noprof[gpu] ? "Tesla T4" : "NVIDIA H100 80GB HBM3");
		return;
	case 54: /* uuid */
		v->type = DCGM_FT_STRING;
		if (mig)
			snprintf(v->str, sizeof(v->str), "MIG-5ca1ab1e-0000-4000-9000-%012d", gpu);
		else
			gpu_uuid(v->str, sizeof(v->str), gpu);
		return;
	case 57: /* PCI bus id */
		v->type = DCGM_FT_STRING;
		pci_bus_id(v->str, sizeof(v->str), gpu);
		return;
	case 53: /* serial: a T4 reports none (DCGM's string blank) */
		v->type = DCGM_FT_STRING;
		if (s->noprof[gpu])
			snprintf(v->str, sizeof(v->str), "<<<NOT_SUPPORTED>>>");
		else
			snprintf(v->str, sizeof(v->str), "1654922%06d", gpu);
		return;
	case 85: /* VBIOS version */
		v->type = DCGM_FT_STRING;
		snprintf(v->str, sizeof(v->str), "%s", s->noprof[gpu] ? "90.04.96.00.02" : "96.00.99.00.01");
		return;
	/* temperature thresholds, °C: an H100's slowdown, shutdown and memory
	 * maximum; a T4 has no HBM (blank) */
	case 151: v->i64 = s->noprof[gpu] ? DCGM_INT64_BLANK : 95; return;
	case 158: v->i64 = s->noprof[gpu] ? 93 : 89; return;
	case 159: v->i64 = s->noprof[gpu] ? 96 : 92; return;
	case 140: /* memory temperature: not reported by T4s (blank) */
		v->i64 = s->noprof[gpu] ? DCGM_INT64_BLANK : 60 + gpu;
		return;
	case 150: v->i64 = 50 + gpu; return;
	case 155: v->dbl = 300.5 + gpu; return;
	/* energy in mJ: 1 kJ per read, from a per-epoch base. A new epoch
	 * (driver reload) starts lower, which is a counter reset. */
	case 156: v->i64 = (s->epoch == 1 ? 5000000000LL : 1000000LL) + n * 1000000LL; return;
	/* enforced power limit, W: a T4's or an H100's board power */
	case 164: v->dbl = s->noprof[gpu] ? 70 : 700; return;
	case 203: v->i64 = 90 + gpu; return;
	case 204: v->i64 = 40; return;
	/* frame buffer total, free, used, MiB: an H100's, or a 1g.10gb MIG instance's */
	case 250: v->i64 = mig ? 9728 : 81559; return;
	case 251: v->i64 = mig ? 7000 : 40000; return;
	case 252: v->i64 = mig ? 2728 : 41559; return;
	case 253: v->i64 = 0; return;
	case 100: v->i64 = 1980; return;
	case 101: v->i64 = 2619; return;
	case 112: v->i64 = 0; return;
	case 310: v->i64 = 2; return;
	case 311: v->i64 = 0; return;
	case 230: /* the last XID's code, as DCGM keeps it; 0 before any */
		for (int i = 0; i < s->nxids; i++)
			if (s->xids[i].gpu == gpu && !mig && s->xids[i].ts <= ts)
				v->i64 = s->xids[i].code;
		return;
	/* The recovery action. A driver that predates the field answers
	 * NVML_ERROR_NOT_SUPPORTED, which DCGM stores as its NOT_SUPPORTED
	 * blank. The stand-in answers the read with status OK and the blank,
	 * so that only the value says so: a reader that checks the status
	 * alone would report the blank as an action. */
	case 1523:
		v->i64 = s->recovery[gpu] < 0 ? DCGM_INT64_NOT_SUPPORTED : s->recovery[gpu];
		return;
	/* CPU affinity: GPUs 0-15 on CPUs 0-63, the others on 64-127. */
	case 70: v->i64 = gpu < 16 ? -1LL : 0; return;
	case 71: v->i64 = gpu < 16 ? 0 : -1LL; return;
	case 72: case 73: v->i64 = 0; return;
	case 235: v->i64 = 4; return;  /* PCIe max link generation (go-dcgm knows 1-4) */
	case 236: v->i64 = 16; return; /* PCIe max link width */
	default:
		if (id >= 1001 && id <= 1008) {
			if (s->noprof[gpu]) {
				not_supported(v);
				return;
			}
			v->dbl = 0.5 + 0.01 * (id - 1000);
			return;
		}
		if (id >= 1009 && id <= 1012) {
			if (s->noprof[gpu]) {
				not_supported(v);
				return;
			}
			v->i64 = 1000000000LL; /* 1 GB/s */
			return;
		}
	}
}

/* entity_value computes one field of one entity, as the entity-based
 * reads see it, and returns the entity's GPU index. */
static void entity_value(const struct state *s, struct val *v, dcgm_field_entity_group_t eg, unsigned int eid,
                         unsigned short id, long long ts)
{
	if (eg == DCGM_FE_NONE) {
		value(s, v, 0, 0, id, ts);
		return;
	}
	int mig = eg == DCGM_FE_GPU_I;
	int gpu = mig ? 0 : (int)eid;
	if (gpu >= s->gpus || (eg != DCGM_FE_GPU && !mig) || (mig && !s->mig)) {
		memset(v, 0, sizeof(*v));
		v->status = DCGM_ST_BADPARAM;
		return;
	}
	value(s, v, gpu, mig, id, ts);
}

/* Copy a computed value into DCGM's value structs. Both carry a union of
 * int64, double, string and blob; only the bytes that the type uses are
 * written, as a caller reads only those. */
#define PUT_VALUE(dst, v)                                                    \
	do {                                                                     \
		(dst)->status = (v)->status;                                         \
		(dst)->ts = (v)->ts;                                                 \
		(dst)->fieldType = (v)->type;                                        \
		if ((v)->type == DCGM_FT_STRING)                                     \
			snprintf((dst)->value.str, sizeof((dst)->value.str), "%s", (v)->str); \
		else if ((v)->type == DCGM_FT_DOUBLE)                                \
			(dst)->value.dbl = (v)->dbl;                                     \
		else                                                                 \
			(dst)->value.i64 = (v)->i64;                                     \
	} while (0)

/* tick advances time once per read of the device fields (those include
 * energy), and restarts the count when the epoch changes. */
static void tick(const struct state *s, const unsigned short fields[], unsigned int nf)
{
	if (s->epoch != epoch_seen) {
		epoch_seen = s->epoch;
		epoch_calls = 0;
	}
	for (unsigned int f = 0; f < nf; f++) {
		if (fields[f] == 156) {
			calls++;
			epoch_calls++;
			return;
		}
	}
}

dcgmReturn_t dcgmEntitiesGetLatestValues(dcgmHandle_t h, dcgmGroupEntityPair_t entities[], unsigned int ne,
                                         unsigned short fields[], unsigned int nf, unsigned int flags,
                                         dcgmFieldValue_v2 values[])
{
	struct state s;
	struct val v;
	(void)flags;
	CONNECTED(s);
	if ((uintptr_t)h != conn_handle)
		return DCGM_ST_BADPARAM; /* not the connection's handle */
	tick(&s, fields, nf);
	long long ts = now_us();
	for (unsigned int e = 0; e < ne; e++) {
		for (unsigned int f = 0; f < nf; f++) {
			dcgmFieldValue_v2 *out = &values[e * nf + f];
			out->version = dcgmFieldValue_version2;
			out->entityGroupId = entities[e].entityGroupId;
			out->entityId = entities[e].entityId;
			out->fieldId = fields[f];
			entity_value(&s, &v, entities[e].entityGroupId, entities[e].entityId, fields[f], ts);
			PUT_VALUE(out, &v);
		}
	}
	return DCGM_ST_OK;
}

/* dcgmEntityGetLatestValues is the one-entity read (dcgm-exporter calls it
 * once per GPU per scrape). */
dcgmReturn_t dcgmEntityGetLatestValues(dcgmHandle_t h, dcgm_field_entity_group_t eg, int eid, unsigned short fields[],
                                       unsigned int nf, dcgmFieldValue_v1 values[])
{
	struct state s;
	struct val v;
	CONNECTED(s);
	if ((uintptr_t)h != conn_handle)
		return DCGM_ST_BADPARAM; /* not the connection's handle */
	tick(&s, fields, nf);
	long long ts = now_us();
	for (unsigned int f = 0; f < nf; f++) {
		dcgmFieldValue_v1 *out = &values[f];
		out->version = dcgmFieldValue_version1;
		out->fieldId = fields[f];
		entity_value(&s, &v, eg, (unsigned int)eid, fields[f], ts);
		PUT_VALUE(out, &v);
	}
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetLatestValuesForFields(dcgmHandle_t h, int gpu, unsigned short fields[], unsigned int nf,
                                          dcgmFieldValue_v1 values[])
{
	return dcgmEntityGetLatestValues(h, DCGM_FE_GPU, gpu, fields, nf, values);
}

dcgmReturn_t dcgmGetValuesSince_v2(dcgmHandle_t h, dcgmGpuGrp_t g, dcgmFieldGrp_t fg, long long since,
                                   long long *next, dcgmFieldValueEntityEnumeration_f cb, void *user)
{
	struct state s;
	(void)h;
	(void)g;
	(void)fg;
	CONNECTED(s);
	long long now = now_us();
	for (int i = 0; i < s.nxids; i++) {
		if (s.xids[i].ts <= since || s.xids[i].ts > now)
			continue;
		dcgmFieldValue_v1 v;
		memset(&v, 0, sizeof(v));
		v.version = dcgmFieldValue_version1;
		v.fieldId = 230;
		v.fieldType = DCGM_FT_INT64;
		v.status = DCGM_ST_OK;
		v.ts = s.xids[i].ts;
		v.value.i64 = s.xids[i].code;
		cb(DCGM_FE_GPU, (dcgm_field_eid_t)s.xids[i].gpu, &v, 1, user);
	}
	*next = now + 1;
	return DCGM_ST_OK;
}

/*
 * What dcgm-exporter calls besides the above, at start-up (field metadata,
 * device attributes and topology, per-GPU groups) and per scrape
 * (dcgmEntityGetLatestValues), so that the real dcgm-exporter runs against
 * the same canned GPUs as the receiver.
 */

/* Field metadata: the fields the stand-in serves. */
static const struct {
	unsigned short id;
	char type;
	const char *tag;
	int level; /* entity level */
} field_table[] = {
	{1, DCGM_FT_STRING, "driver_version", DCGM_FE_NONE},
	{50, DCGM_FT_STRING, "name", DCGM_FE_GPU},
	{53, DCGM_FT_STRING, "serial", DCGM_FE_GPU},
	{54, DCGM_FT_STRING, "uuid", DCGM_FE_GPU},
	{57, DCGM_FT_STRING, "pci_busid", DCGM_FE_GPU},
	{70, DCGM_FT_INT64, "cpu_affinity_0", DCGM_FE_GPU},
	{71, DCGM_FT_INT64, "cpu_affinity_1", DCGM_FE_GPU},
	{72, DCGM_FT_INT64, "cpu_affinity_2", DCGM_FE_GPU},
	{73, DCGM_FT_INT64, "cpu_affinity_3", DCGM_FE_GPU},
	{85, DCGM_FT_STRING, "vbios_version", DCGM_FE_GPU},
	{100, DCGM_FT_INT64, "sm_clock", DCGM_FE_GPU},
	{101, DCGM_FT_INT64, "memory_clock", DCGM_FE_GPU},
	{112, DCGM_FT_INT64, "clocks_event_reasons", DCGM_FE_GPU},
	{140, DCGM_FT_INT64, "memory_temp", DCGM_FE_GPU},
	{150, DCGM_FT_INT64, "gpu_temp", DCGM_FE_GPU},
	{151, DCGM_FT_INT64, "mem_max_op_temp", DCGM_FE_GPU},
	{155, DCGM_FT_DOUBLE, "power_usage", DCGM_FE_GPU},
	{156, DCGM_FT_INT64, "total_energy_consumption", DCGM_FE_GPU},
	{158, DCGM_FT_INT64, "slowdown_temp", DCGM_FE_GPU},
	{159, DCGM_FT_INT64, "shutdown_temp", DCGM_FE_GPU},
	{164, DCGM_FT_DOUBLE, "enforced_power_limit", DCGM_FE_GPU},
	{202, DCGM_FT_INT64, "pcie_replay_counter", DCGM_FE_GPU},
	{203, DCGM_FT_INT64, "gpu_utilization", DCGM_FE_GPU},
	{204, DCGM_FT_INT64, "mem_copy_utilization", DCGM_FE_GPU},
	{206, DCGM_FT_INT64, "enc_utilization", DCGM_FE_GPU},
	{207, DCGM_FT_INT64, "dec_utilization", DCGM_FE_GPU},
	{230, DCGM_FT_INT64, "xid_errors", DCGM_FE_GPU},
	{235, DCGM_FT_INT64, "pcie_max_link_gen", DCGM_FE_GPU},
	{236, DCGM_FT_INT64, "pcie_max_link_width", DCGM_FE_GPU},
	{240, DCGM_FT_INT64, "power_violation", DCGM_FE_GPU},
	{241, DCGM_FT_INT64, "thermal_violation", DCGM_FE_GPU},
	{250, DCGM_FT_INT64, "fb_total", DCGM_FE_GPU},
	{251, DCGM_FT_INT64, "fb_free", DCGM_FE_GPU},
	{252, DCGM_FT_INT64, "fb_used", DCGM_FE_GPU},
	{253, DCGM_FT_INT64, "fb_reserved", DCGM_FE_GPU},
	{310, DCGM_FT_INT64, "ecc_sbe_volatile_total", DCGM_FE_GPU},
	{311, DCGM_FT_INT64, "ecc_dbe_volatile_total", DCGM_FE_GPU},
	{393, DCGM_FT_INT64, "uncorrectable_remapped_rows", DCGM_FE_GPU},
	{394, DCGM_FT_INT64, "correctable_remapped_rows", DCGM_FE_GPU},
	{395, DCGM_FT_INT64, "row_remap_failure", DCGM_FE_GPU},
	{1001, DCGM_FT_DOUBLE, "gr_engine_active", DCGM_FE_GPU},
	{1002, DCGM_FT_DOUBLE, "sm_active", DCGM_FE_GPU},
	{1003, DCGM_FT_DOUBLE, "sm_occupancy", DCGM_FE_GPU},
	{1004, DCGM_FT_DOUBLE, "tensor_active", DCGM_FE_GPU},
	{1005, DCGM_FT_DOUBLE, "dram_active", DCGM_FE_GPU},
	{1006, DCGM_FT_DOUBLE, "fp64_active", DCGM_FE_GPU},
	{1007, DCGM_FT_DOUBLE, "fp32_active", DCGM_FE_GPU},
	{1008, DCGM_FT_DOUBLE, "fp16_active", DCGM_FE_GPU},
	{1009, DCGM_FT_INT64, "pcie_tx_bytes", DCGM_FE_GPU},
	{1010, DCGM_FT_INT64, "pcie_rx_bytes", DCGM_FE_GPU},
	{1011, DCGM_FT_INT64, "nvlink_tx_bytes", DCGM_FE_GPU},
	{1012, DCGM_FT_INT64, "nvlink_rx_bytes", DCGM_FE_GPU},
	{1523, DCGM_FT_INT64, "gpu_recovery_action", DCGM_FE_GPU},
};
#define NFIELDS (sizeof(field_table) / sizeof(field_table[0]))

/* DCGM returns zeroed metadata for an ID in range that it does not know,
 * and NULL past the last field. */
static dcgm_field_meta_t metas[NFIELDS];
static dcgm_field_meta_t unknown_meta;

int DcgmFieldsInit(void)
{
	for (size_t i = 0; i < NFIELDS; i++) {
		dcgm_field_meta_t *m = &metas[i];
		memset(m, 0, sizeof(*m));
		m->fieldId = field_table[i].id;
		m->fieldType = field_table[i].type;
		m->size = field_table[i].type == DCGM_FT_STRING ? 0 : 8;
		snprintf(m->tag, sizeof(m->tag), "%s", field_table[i].tag);
		m->scope = field_table[i].level == DCGM_FE_NONE ? DCGM_FS_GLOBAL : DCGM_FS_ENTITY;
		m->entityLevel = field_table[i].level;
	}
	return 0;
}

int DcgmFieldsTerm(void) { return 0; }

dcgm_field_meta_p DcgmFieldGetById(unsigned short id)
{
	if (id >= DCGM_FI_MAX_FIELDS)
		return NULL;
	for (size_t i = 0; i < NFIELDS; i++)
		if (metas[i].fieldId == id && metas[i].fieldType)
			return &metas[i];
	return &unknown_meta;
}

dcgm_field_meta_p DcgmFieldGetByTag(const char *tag)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (metas[i].fieldType && !strcmp(metas[i].tag, tag))
			return &metas[i];
	return NULL;
}

dcgmReturn_t dcgmGetAllDevices(dcgmHandle_t h, unsigned int ids[DCGM_MAX_NUM_DEVICES], int *count)
{
	return dcgmGetAllSupportedDevices(h, ids, count);
}

dcgmReturn_t dcgmGetEntityGroupEntities(dcgmHandle_t h, dcgm_field_entity_group_t eg, dcgm_field_eid_t *entities,
                                        int *n, unsigned int flags)
{
	struct state s;
	(void)h;
	(void)flags;
	CONNECTED(s);
	int count = eg == DCGM_FE_GPU ? s.gpus : eg == DCGM_FE_SWITCH ? s.switches : 0;
	if (*n < count) {
		*n = count;
		return DCGM_ST_INSUFFICIENT_SIZE;
	}
	for (int i = 0; i < count; i++)
		entities[i] = (dcgm_field_eid_t)i;
	*n = count;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetGpuStatus(dcgmHandle_t h, unsigned int gpu, DcgmEntityStatus_t *status)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	*status = gpu < (unsigned int)s.gpus ? DcgmEntityStatusOk : DcgmEntityStatusUnknown;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetDeviceAttributes(dcgmHandle_t h, unsigned int gpu, dcgmDeviceAttributes_t *a)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	if (a->version != dcgmDeviceAttributes_version3)
		return DCGM_ST_VER_MISMATCH;
	if (gpu >= (unsigned int)s.gpus)
		return DCGM_ST_BADPARAM;
	unsigned int version = a->version;
	memset(a, 0, sizeof(*a));
	a->version = version;
	a->powerLimits.curPowerLimit = a->powerLimits.defaultPowerLimit = a->powerLimits.enforcedPowerLimit = 700;
	a->powerLimits.minPowerLimit = 200;
	a->powerLimits.maxPowerLimit = 700;
	dcgmDeviceIdentifiers_t *id = &a->identifiers;
	snprintf(id->brandName, sizeof(id->brandName), "NVIDIA");
	snprintf(id->deviceName, sizeof(id->deviceName), "%s", s.noprof[gpu] ? "Tesla T4" : "NVIDIA H100 80GB HBM3");
	pci_bus_id(id->pciBusId, sizeof(id->pciBusId), (int)gpu);
	snprintf(id->serial, sizeof(id->serial), "16520000%05u", gpu);
	gpu_uuid(id->uuid, sizeof(id->uuid), (int)gpu);
	snprintf(id->vbios, sizeof(id->vbios), "96.00.99.00.01");
	snprintf(id->inforomImageVersion, sizeof(id->inforomImageVersion), "G520.0200.00.05");
	snprintf(id->driverVersion, sizeof(id->driverVersion), "550.54.15");
	a->memoryUsage.bar1Total = 131072;
	a->memoryUsage.fbTotal = 81559;
	a->memoryUsage.fbUsed = 41559;
	a->memoryUsage.fbFree = 40000;
	return DCGM_ST_OK;
}

/* No peer paths: the stand-in's GPUs are not linked. Callers built with
 * older headers ask for version 1 of the struct, newer ones for version 2. */
dcgmReturn_t dcgmGetDeviceTopology(dcgmHandle_t h, unsigned int gpu, dcgmDeviceTopology_v2 *t)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	if (gpu >= (unsigned int)s.gpus)
		return DCGM_ST_BADPARAM;
	if (t->version == dcgmDeviceTopology_version1) {
		dcgmDeviceTopology_v1 *t1 = (dcgmDeviceTopology_v1 *)t;
		memset(t1->cpuAffinityMask, 0, sizeof(t1->cpuAffinityMask));
		t1->numGpus = 0;
		return DCGM_ST_OK;
	}
	if (t->version == dcgmDeviceTopology_version2) {
		memset(t->cpuAffinityMask, 0, sizeof(t->cpuAffinityMask));
		t->numGpus = 0;
		return DCGM_ST_OK;
	}
	return DCGM_ST_VER_MISMATCH;
}

dcgmReturn_t dcgmGetNvLinkLinkStatus(dcgmHandle_t h, dcgmNvLinkStatus_v5 *st)
{
	(void)h;
	(void)st;
	return DCGM_ST_NOT_SUPPORTED;
}

dcgmReturn_t dcgmGroupAddDevice(dcgmHandle_t h, dcgmGpuGrp_t g, unsigned int gpu)
{
	return dcgmGroupAddEntity(h, g, DCGM_FE_GPU, gpu);
}

dcgmReturn_t dcgmUnwatchFields(dcgmHandle_t h, dcgmGpuGrp_t g, dcgmFieldGrp_t fg)
{
	struct state s;
	(void)h;
	(void)g;
	(void)fg;
	CONNECTED(s);
	return DCGM_ST_OK;
}

/* The stand-in models GPUs only: no NVIDIA CPUs, no NVLink peers. */
dcgmReturn_t dcgmGetCpuHierarchy(dcgmHandle_t h, dcgmCpuHierarchy_v1 *c)
{
	(void)h;
	(void)c;
	return DCGM_ST_NOT_SUPPORTED;
}

dcgmReturn_t dcgmGetNvLinkP2PStatus(dcgmHandle_t h, dcgmNvLinkP2PStatus_v1 *st)
{
	(void)h;
	(void)st;
	return DCGM_ST_NOT_SUPPORTED;
}

/* The health watches, in a file of their own. */
#include "libdcgm_health.c"
