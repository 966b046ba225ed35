/*
 * A stand-in for NVIDIA's libdcgm.so.4, for tests on machines without GPUs.
 *
 * It exports the DCGM C functions that the dcgm receiver's code path calls
 * through go-dcgm, built against go-dcgm's own copies of DCGM's headers, so
 * that the real go-dcgm code runs against canned GPUs.
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
 *   xid G CODE T  an XID event CODE on GPU G at time T (usec since 1970)
 *
 * If STANDIN_DCGM_WATCHLOG names a file, every dcgmWatchFields call appends
 * one line to it: "watch FREQ_USEC ID ID ...", the field IDs of the group
 * watched, so that tests can check what the receiver asks DCGM to sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "dcgm_agent.h"
#include "dcgm_structs.h"

#define MAX_XIDS 64

struct state {
	int gpus;
	int noprof[DCGM_MAX_NUM_DEVICES];
	int mig;
	int connected;
	long long epoch;
	int stale;
	int nxids;
	struct { int gpu; long long code, ts; } xids[MAX_XIDS];
};

static long long calls;      /* device-field reads, a stand-in for time */
static long long epoch_seen; /* epoch of the last read */
static long long epoch_calls;
static uintptr_t next_handle = 1;

/* Field groups created, for the watch log. */
#define MAX_FGROUPS 256
static struct {
	uintptr_t handle;
	int n;
	unsigned short ids[DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP];
} fgroups[MAX_FGROUPS];
static int nfgroups;

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
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmDisconnect(dcgmHandle_t h)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmStartEmbedded(dcgmOperationMode_t mode, dcgmHandle_t *h)
{
	(void)mode;
	*h = (dcgmHandle_t)next_handle++;
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t h)
{
	(void)h;
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
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupAddEntity(dcgmHandle_t h, dcgmGpuGrp_t g, dcgm_field_entity_group_t eg, dcgm_field_eid_t e)
{
	struct state s;
	(void)h;
	(void)g;
	(void)eg;
	(void)e;
	CONNECTED(s);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupDestroy(dcgmHandle_t h, dcgmGpuGrp_t g)
{
	struct state s;
	(void)h;
	(void)g;
	CONNECTED(s);
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
	return id == 155 || (id >= 1001 && id <= 1008);
}

/* value fills one field of one entity. Values are simple functions of the
 * GPU, the field and the read count, so that tests can predict them. */
static void value(const struct state *s, dcgmFieldValue_v2 *v, int gpu, int mig, unsigned short id, long long ts)
{
	v->status = DCGM_ST_OK;
	v->ts = s->stale ? ts - 3600LL * 1000000LL : ts;
	v->fieldType = is_double(id) ? DCGM_FT_DOUBLE : DCGM_FT_INT64;
	long long n = epoch_calls;
	switch (id) {
	case 1: /* driver version */
		v->fieldType = DCGM_FT_STRING;
		snprintf(v->value.str, sizeof(v->value.str), "550.54.15");
		return;
	case 50: /* name */
		v->fieldType = DCGM_FT_STRING;
		snprintf(v->value.str, sizeof(v->value.str), "%s", s->noprof[gpu] ? "Tesla T4" : "NVIDIA H100 80GB HBM3");
		return;
	case 54: /* uuid */
		v->fieldType = DCGM_FT_STRING;
		if (mig)
			snprintf(v->value.str, sizeof(v->value.str), "MIG-5ca1ab1e-0000-4000-9000-%012d", gpu);
		else
			gpu_uuid(v->value.str, sizeof(v->value.str), gpu);
		return;
	case 57: /* PCI bus id */
		v->fieldType = DCGM_FT_STRING;
		snprintf(v->value.str, sizeof(v->value.str), "00000000:%02X:00.0", 0x18 + 0x10 * gpu);
		return;
	case 140: /* memory temperature: not reported by T4s (blank) */
		v->value.i64 = s->noprof[gpu] ? DCGM_INT64_BLANK : 60 + gpu;
		return;
	case 150: v->value.i64 = 50 + gpu; return;
	case 155: v->value.dbl = 300.5 + gpu; return;
	/* energy in mJ: 1 kJ per read, from a per-epoch base. A new epoch
	 * (driver reload) starts lower, which is a counter reset. */
	case 156: v->value.i64 = (s->epoch == 1 ? 5000000000LL : 1000000LL) + n * 1000000LL; return;
	case 203: v->value.i64 = 90 + gpu; return;
	case 204: v->value.i64 = 40; return;
	case 250: v->value.i64 = 81559; return;
	case 251: v->value.i64 = 40000; return;
	case 252: v->value.i64 = 41559; return;
	case 253: v->value.i64 = 0; return;
	case 100: v->value.i64 = 1980; return;
	case 101: v->value.i64 = 2619; return;
	case 112: v->value.i64 = 0; return;
	case 310: v->value.i64 = 2; return;
	case 311: v->value.i64 = 0; return;
	case 230: v->value.i64 = 0; return;
	default:
		if (id >= 1001 && id <= 1008) {
			if (s->noprof[gpu]) {
				v->status = DCGM_ST_NOT_SUPPORTED;
				return;
			}
			v->value.dbl = 0.5 + 0.01 * (id - 1000);
			return;
		}
		if (id >= 1009 && id <= 1012) {
			if (s->noprof[gpu]) {
				v->status = DCGM_ST_NOT_SUPPORTED;
				return;
			}
			v->value.i64 = 1000000000LL; /* 1 GB/s */
			return;
		}
		v->value.i64 = 0;
	}
}

dcgmReturn_t dcgmEntitiesGetLatestValues(dcgmHandle_t h, dcgmGroupEntityPair_t entities[], unsigned int ne,
                                         unsigned short fields[], unsigned int nf, unsigned int flags,
                                         dcgmFieldValue_v2 values[])
{
	struct state s;
	(void)h;
	(void)flags;
	CONNECTED(s);
	if (s.epoch != epoch_seen) {
		epoch_seen = s.epoch;
		epoch_calls = 0;
	}
	/* Time advances once per read of the device fields (those include energy). */
	for (unsigned int f = 0; f < nf; f++) {
		if (fields[f] == 156) {
			calls++;
			epoch_calls++;
			break;
		}
	}
	long long ts = now_us();
	for (unsigned int e = 0; e < ne; e++) {
		for (unsigned int f = 0; f < nf; f++) {
			dcgmFieldValue_v2 *v = &values[e * nf + f];
			v->version = dcgmFieldValue_version2;
			v->entityGroupId = entities[e].entityGroupId;
			v->entityId = entities[e].entityId;
			v->fieldId = fields[f];
			int gpu = (int)entities[e].entityId;
			int mig = entities[e].entityGroupId == DCGM_FE_GPU_I;
			if (entities[e].entityGroupId == DCGM_FE_NONE) {
				value(&s, v, 0, 0, fields[f], ts);
				continue;
			}
			if (mig)
				gpu = 0;
			if (gpu >= s.gpus) {
				v->status = DCGM_ST_BADPARAM;
				continue;
			}
			value(&s, v, gpu, mig, fields[f], ts);
		}
	}
	return DCGM_ST_OK;
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
