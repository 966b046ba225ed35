/*
 * The stand-in's health watches (dcgmHealthSet, dcgmHealthGet,
 * dcgmHealthCheck), included by libdcgm.c, whose state and groups they use.
 *
 * dcgmHealthSet keeps the systems per group, as DCGM does; dcgmHealthCheck
 * answers, for a group, the incidents of the state file ("health" and
 * "switchhealth" lines) whose entity is in the group and whose system the
 * group watches: a group whose watches were never set reports nothing, as
 * DCGM's does, so that a caller that checks without setting is caught.
 *
 * If STANDIN_DCGM_HEALTHLOG names a file, dcgmHealthSet appends
 * "healthset SYSTEMS GPU ... sw SWITCH ..." (the systems in hex) and
 * dcgmHealthCheck "healthcheck N", the number of incidents answered.
 */

static void health_log(const char *line)
{
	const char *path = getenv("STANDIN_DCGM_HEALTHLOG");
	if (!path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fputs(line, f);
	fclose(f);
}

dcgmReturn_t dcgmHealthSet(dcgmHandle_t h, dcgmGpuGrp_t g, dcgmHealthSystems_t systems)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	if (s.nohealth)
		return DCGM_ST_MODULE_NOT_LOADED;
	int i = group_index(g);
	if (i < 0)
		return DCGM_ST_NOT_CONFIGURED;
	groups[i].health = (unsigned int)systems;
	char line[1024];
	int n = snprintf(line, sizeof(line), "healthset %x", (unsigned int)systems);
	for (int j = 0; j < groups[i].n && n < (int)sizeof(line) - 16; j++)
		n += snprintf(line + n, sizeof(line) - n, " %u", groups[i].gpus[j]);
	if (groups[i].nsw > 0)
		n += snprintf(line + n, sizeof(line) - n, " sw");
	for (int j = 0; j < groups[i].nsw && n < (int)sizeof(line) - 16; j++)
		n += snprintf(line + n, sizeof(line) - n, " %u", groups[i].switches[j]);
	snprintf(line + n, sizeof(line) - n, "\n");
	health_log(line);
	return DCGM_ST_OK;
}

dcgmReturn_t dcgmHealthGet(dcgmHandle_t h, dcgmGpuGrp_t g, dcgmHealthSystems_t *systems)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	int i = group_index(g);
	if (i < 0)
		return DCGM_ST_NOT_CONFIGURED;
	*systems = (dcgmHealthSystems_t)groups[i].health;
	return DCGM_ST_OK;
}

static int group_has(int i, unsigned int eg, unsigned int e)
{
	if (eg == DCGM_FE_GPU) {
		for (int j = 0; j < groups[i].n; j++)
			if (groups[i].gpus[j] == e)
				return 1;
	} else if (eg == DCGM_FE_SWITCH) {
		for (int j = 0; j < groups[i].nsw; j++)
			if (groups[i].switches[j] == e)
				return 1;
	}
	return 0;
}

/* What DCGM's health module answers for each system, roughly: the error
 * code and a message of its kind. */
static unsigned int health_code(unsigned int system)
{
	switch (system) {
	case DCGM_HEALTH_WATCH_PCIE: return DCGM_FR_PCI_REPLAY_RATE;
	case DCGM_HEALTH_WATCH_MEM: return DCGM_FR_VOLATILE_DBE_DETECTED;
	case DCGM_HEALTH_WATCH_INFOROM: return DCGM_FR_CORRUPT_INFOROM;
	case DCGM_HEALTH_WATCH_THERMAL: return DCGM_FR_CLOCK_THROTTLE_THERMAL;
	case DCGM_HEALTH_WATCH_POWER: return DCGM_FR_CLOCK_THROTTLE_POWER;
	case DCGM_HEALTH_WATCH_NVLINK: return DCGM_FR_NVLINK_DOWN;
	case DCGM_HEALTH_WATCH_NVSWITCH_FATAL: return DCGM_FR_NVSWITCH_FATAL_ERROR;
	case DCGM_HEALTH_WATCH_NVSWITCH_NONFATAL: return DCGM_FR_NVSWITCH_NON_FATAL_ERROR;
	default: return DCGM_FR_UNKNOWN;
	}
}

dcgmReturn_t dcgmHealthCheck(dcgmHandle_t h, dcgmGpuGrp_t g, dcgmHealthResponse_t *r)
{
	struct state s;
	(void)h;
	CONNECTED(s);
	if (r->version != dcgmHealthResponse_version5)
		return DCGM_ST_VER_MISMATCH;
	int i = group_index(g);
	if (i < 0)
		return DCGM_ST_NOT_CONFIGURED;
	unsigned int version = r->version;
	/* The response is a megabyte; zero what is answered, as a caller
	 * reads only incidentCount of the incidents. */
	r->version = version;
	r->overallHealth = DCGM_HEALTH_RESULT_PASS;
	r->incidentCount = 0;
	for (int k = 0; k < s.nhealth && r->incidentCount < DCGM_HEALTH_WATCH_MAX_INCIDENTS_V2; k++) {
		if (!(s.health[k].system & groups[i].health) || !group_has(i, s.health[k].group, s.health[k].entity))
			continue;
		dcgmIncidentInfo_t *inc = &r->incidents[r->incidentCount++];
		memset(inc, 0, sizeof(*inc));
		inc->system = (dcgmHealthSystems_t)s.health[k].system;
		inc->health = (dcgmHealthWatchResults_t)s.health[k].result;
		inc->error.code = health_code(s.health[k].system);
		snprintf(inc->error.msg, sizeof(inc->error.msg), "stand-in incident: %s %u, system 0x%x",
		         s.health[k].group == DCGM_FE_GPU ? "GPU" : "NvSwitch", s.health[k].entity, s.health[k].system);
		inc->entityInfo.entityGroupId = (dcgm_field_entity_group_t)s.health[k].group;
		inc->entityInfo.entityId = s.health[k].entity;
		if (inc->health > r->overallHealth)
			r->overallHealth = inc->health;
	}
	char line[64];
	snprintf(line, sizeof(line), "healthcheck %u\n", r->incidentCount);
	health_log(line);
	return DCGM_ST_OK;
}
