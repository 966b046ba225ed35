// Package dcgmbackend reads GPUs through DCGM with go-dcgm, from a
// standalone nv-hostengine or an embedded host engine. The latest values
// are read with DCGM's C API directly, on go-dcgm's connection, into a
// reused buffer (latest.go).
//
// go-dcgm keeps one global connection per process, so a collector runs at
// most one dcgm receiver that uses this backend.
package dcgmbackend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"go.uber.org/zap"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Options configure the backend.
type Options struct {
	// Address is nv-hostengine's host:port or unix socket path.
	Address    string
	UnixSocket bool
	// Embedded starts a host engine in-process instead.
	Embedded bool
	// Hostname is the host.name of the devices; empty means none.
	Hostname string
	Logger   *zap.Logger
	// UpdateEvery is how often DCGM samples the watched fields: the
	// collection interval, so that the host engine samples once per
	// collection rather than twice (0 means 1 s).
	UpdateEvery time.Duration
	// Fields are the fields to watch and read; nil means every field in
	// the catalog. Watching fewer saves the host engine's sampling and the
	// copies of values nobody uses.
	Fields []f.Field
	// MIGRescan is how often the MIG instances are listed again, to
	// follow those created and destroyed while the collector runs (0
	// means 30 s). Not at every collection: go-dcgm's hierarchy call
	// copies a 150 KB structure, a third more time and memory than a
	// whole scrape of 32 GPUs.
	MIGRescan time.Duration
	// Health sets DCGM's health watches and reports their results
	// (health.go); HealthEvery is how often they are checked (0 means
	// 30 s).
	Health      bool
	HealthEvery time.Duration
}

// Backend is the DCGM backend.
type Backend struct {
	opts      Options
	connected bool
	// epoch counts connections: counters read after a reconnect are not
	// comparable with those before (gpu.Sample.Epoch).
	epoch uint64

	entities     []entity
	pairs        []dcgm.GroupEntityPair // every entity, for device fields
	profPairs    []dcgm.GroupEntityPair // entities with profiling support
	baseIDs      []dcgm.Short
	profIDs      []dcgm.Short
	group        dcgm.GroupHandle
	xidFields    dcgm.FieldHandle
	xidSince     time.Time
	byEntity     map[dcgm.GroupEntityPair]int
	warnedFields map[string]bool
	wanted       [f.Count]bool

	// Readers of the device and profiling fields, made at the first
	// Collect after a connection or a change of entities (see latest.go).
	base, prof *latestReader

	// migChecked is when the MIG instances were last listed.
	migChecked time.Time

	health healthState
}

type entity struct {
	pair      dcgm.GroupEntityPair
	dev       gpu.Device
	profiling bool
	// slices is a MIG instance's GPU slices, whose profile is named in
	// full once its memory and its parent's are read (nameProfiles).
	slices int
}

// New returns an unconnected backend.
func New(opts Options) *Backend {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.UpdateEvery <= 0 {
		opts.UpdateEvery = time.Second
	}
	if opts.MIGRescan <= 0 {
		opts.MIGRescan = 30 * time.Second
	}
	if opts.HealthEvery <= 0 {
		// DCGM samples what the PCIe, memory, thermal and power watches
		// read every 30 s at most, and judges the last minute: a check
		// each 30 s misses nothing, and each answer is a 1 MB structure
		// (dcgmHealthResponse_v5) copied from the host engine.
		opts.HealthEvery = 30 * time.Second
	}
	b := &Backend{opts: opts, warnedFields: make(map[string]bool)}
	fields := opts.Fields
	if fields == nil {
		fields = f.All()
	}
	for _, field := range fields {
		b.wanted[field] = true
	}
	return b
}

// Name implements backend.Backend.
func (*Backend) Name() string { return "dcgm" }

// initMu serializes go-dcgm's process-global Init and Shutdown.
var initMu sync.Mutex

// Connect implements backend.Backend.
func (b *Backend) Connect(context.Context) error {
	initMu.Lock()
	defer initMu.Unlock()
	if b.connected {
		return nil
	}
	var err error
	if b.opts.Embedded {
		_, err = dcgm.Init(dcgm.Embedded)
	} else {
		unix := "0"
		if b.opts.UnixSocket {
			unix = "1"
		}
		_, err = dcgm.Init(dcgm.Standalone, b.opts.Address, unix)
	}
	if err != nil {
		if strings.Contains(err.Error(), "libdcgm.so") {
			return fmt.Errorf("DCGM library not found (%w): install the DCGM client library or use backend nvml", err)
		}
		where := "embedded host engine"
		if !b.opts.Embedded {
			where = "nv-hostengine at " + b.opts.Address
		}
		return fmt.Errorf("%s: %w", where, err)
	}
	b.connected = true
	b.epoch++
	if err := b.discover(); err != nil {
		b.closeLocked()
		return err
	}
	return nil
}

// discover finds the GPUs and MIG instances, their identities and their
// profiling support, and sets up the watches.
func (b *Backend) discover() error {
	if err := b.listEntities(); err != nil {
		return err
	}
	if err := b.createGroup(); err != nil {
		return err
	}
	if err := b.readIdentities(); err != nil {
		return err
	}
	b.nameMIGInstances()
	b.checkProfiling()
	b.setHealth()
	return b.watchFields()
}

// listEntities lists the GPUs and the MIG instances DCGM supports.
func (b *Backend) listEntities() error {
	gpuIDs, err := dcgm.GetSupportedDevices()
	if err != nil {
		return fmt.Errorf("list GPUs: %w", err)
	}
	b.entities = b.entities[:0]
	for _, id := range gpuIDs {
		b.entities = append(b.entities, entity{pair: dcgm.GroupEntityPair{EntityGroupId: dcgm.FE_GPU, EntityId: id}})
	}
	hier, err := dcgm.GetGPUInstanceHierarchy()
	if err != nil {
		b.opts.Logger.Debug("No MIG hierarchy", zap.Error(err))
	} else {
		for i := uint(0); i < hier.Count; i++ {
			e := hier.EntityList[i]
			if e.Entity.EntityGroupId != dcgm.FE_GPU_I {
				continue
			}
			b.entities = append(b.entities, entity{
				pair:   e.Entity,
				slices: int(e.Info.NvmlProfileSlices),
				dev: gpu.Device{
					Index: int(e.Info.NvmlGpuIndex),
					MIG: &gpu.MIG{
						ParentUUID:      e.Info.GpuUuid,
						GPUInstance:     int(e.Info.NvmlInstanceId),
						ComputeInstance: int(e.Info.NvmlComputeInstanceId),
						Profile:         fmt.Sprintf("%dg", e.Info.NvmlProfileSlices),
					},
				},
			})
		}
	}
	if len(b.entities) == 0 {
		return errors.New("DCGM reports no supported GPUs")
	}
	return nil
}

// createGroup puts every entity in one DCGM group, which the watches use.
func (b *Backend) createGroup() error {
	var err error
	b.group, err = dcgm.CreateGroup(fmt.Sprintf("otelcol-gpu-%d", time.Now().UnixNano()))
	if err != nil {
		return fmt.Errorf("create GPU group: %w", err)
	}
	b.pairs = b.pairs[:0]
	b.byEntity = make(map[dcgm.GroupEntityPair]int, len(b.entities))
	for i, e := range b.entities {
		if err := dcgm.AddEntityToGroup(b.group, e.pair.EntityGroupId, e.pair.EntityId); err != nil {
			return fmt.Errorf("add entity %v to group: %w", e.pair, err)
		}
		b.pairs = append(b.pairs, e.pair)
		b.byEntity[e.pair] = i
	}
	return nil
}

// nameMIGInstances completes each MIG instance's identity from its parent
// GPU: parent UUID, a UUID where the driver reports none, model, bus ID.
func (b *Backend) nameMIGInstances() {
	gpuUUID := map[uint]string{}
	for _, e := range b.entities {
		if e.pair.EntityGroupId == dcgm.FE_GPU {
			gpuUUID[e.pair.EntityId] = e.dev.UUID
		}
	}
	for i := range b.entities {
		e := &b.entities[i]
		if e.dev.MIG == nil {
			continue
		}
		if e.dev.MIG.ParentUUID == "" {
			e.dev.MIG.ParentUUID = gpuUUID[uint(e.dev.Index)]
		}
		if !strings.HasPrefix(e.dev.UUID, "MIG-") {
			// Without a MIG UUID from the driver, name the instance after its parent.
			e.dev.UUID = fmt.Sprintf("%s/%d/%d", e.dev.MIG.ParentUUID, e.dev.MIG.GPUInstance, e.dev.MIG.ComputeInstance)
		}
		for _, p := range b.entities {
			if p.dev.MIG != nil || p.dev.UUID != e.dev.MIG.ParentUUID {
				continue
			}
			if e.dev.Model == "" {
				e.dev.Model, e.dev.PCIBusID = p.dev.Model, p.dev.PCIBusID
			}
			// The board's serial and VBIOS are the instance's too.
			e.dev.SerialNumber, e.dev.FirmwareVersion = p.dev.SerialNumber, p.dev.FirmwareVersion
		}
	}
}

// checkProfiling finds which profiling fields each GPU supports (a MIG
// instance inherits its parent's), warns once of a wanted field that is
// not, and splits the wanted fields into device and profiling fields.
func (b *Backend) checkProfiling() {
	profSupported := map[int]map[uint16]bool{}
	for i := range b.entities {
		e := &b.entities[i]
		if e.dev.MIG != nil {
			continue
		}
		supported := map[uint16]bool{}
		groups, err := dcgm.GetSupportedMetricGroups(e.pair.EntityId)
		if err == nil {
			for _, g := range groups {
				for _, id := range g.FieldIds {
					supported[uint16(id)] = true
				}
			}
		}
		profSupported[e.dev.Index] = supported
		for _, field := range f.All() {
			info := field.Info()
			if b.wanted[field] && info.Profiling && !supported[info.ID] {
				b.warnUnsupported(e.dev, field, err)
			}
		}
	}
	b.baseIDs, b.profIDs = b.baseIDs[:0], b.profIDs[:0]
	profUnion := map[uint16]bool{}
	for _, s := range profSupported {
		for id := range s {
			profUnion[id] = true
		}
	}
	for _, field := range f.All() {
		info := field.Info()
		switch {
		case !b.wanted[field]:
		case !info.Profiling:
			b.baseIDs = append(b.baseIDs, dcgm.Short(info.ID))
		case profUnion[info.ID]:
			b.profIDs = append(b.profIDs, dcgm.Short(info.ID))
		}
	}
	b.profPairs = b.profPairs[:0]
	for i := range b.entities {
		e := &b.entities[i]
		e.profiling = len(profSupported[e.dev.Index]) > 0
		if e.profiling {
			b.profPairs = append(b.profPairs, e.pair)
		}
	}
}

// watchFields sets up the watches of the wanted fields.
//
// DCGM samples each watched field once per collection interval: the
// host engine's work is one sample per field per collection, as with
// dcgm-exporter, and the newest value is at most about one interval old
// when read (see Collect).
func (b *Backend) watchFields() error {
	updateEvery := b.opts.UpdateEvery
	watch := func(name string, ids []dcgm.Short) (dcgm.FieldHandle, error) {
		fg, err := dcgm.FieldGroupCreate(name, ids)
		if err != nil {
			return fg, fmt.Errorf("create field group %s: %w", name, err)
		}
		if err := dcgm.WatchFieldsWithGroupEx(fg, b.group, int64(updateEvery/time.Microsecond), 60, 0); err != nil {
			return fg, fmt.Errorf("watch %s fields: %w", name, err)
		}
		return fg, nil
	}
	if len(b.baseIDs) > 0 {
		if _, err := watch("otelcol-gpu-device", b.baseIDs); err != nil {
			return err
		}
	}
	if len(b.profIDs) > 0 {
		if _, err := watch("otelcol-gpu-profiling", b.profIDs); err != nil {
			return err
		}
	}
	b.xidSince = time.Time{}
	if !b.wanted[f.XIDErrors] {
		return nil
	}
	var err error
	if b.xidFields, err = watch("otelcol-gpu-xid", []dcgm.Short{dcgm.Short(f.XIDErrors.Info().ID)}); err != nil {
		return err
	}
	// Read XIDs from now on; history before the connection is not new.
	if _, next, err := dcgm.GetValuesSince(b.group, b.xidFields, time.Time{}); err == nil {
		b.xidSince = next
	}
	return nil
}

func (b *Backend) warnUnsupported(d gpu.Device, field f.Field, cause error) {
	key := d.Model + "/" + field.String()
	if b.warnedFields[key] {
		return
	}
	b.warnedFields[key] = true
	fallback := map[f.Field]string{
		f.GREngineActive: "DCGM_FI_DEV_GPU_UTIL",
		f.DRAMActive:     "DCGM_FI_DEV_MEM_COPY_UTIL",
	}[field]
	fields := []zap.Field{zap.String("field", field.String()), zap.String("model", d.Model), zap.String("uuid", d.UUID)}
	if fallback != "" {
		fields = append(fields, zap.String("fallback", fallback))
	}
	if cause != nil {
		fields = append(fields, zap.NamedError("cause", cause))
	}
	b.opts.Logger.Warn("DCGM profiling field unsupported on this GPU", fields...)
}

// Collect implements backend.Backend.
func (b *Backend) Collect(_ context.Context, now time.Time, maxAge time.Duration) ([]gpu.Sample, error) {
	if !b.connected {
		return nil, errors.New("not connected")
	}
	samples := make([]gpu.Sample, len(b.entities))
	for i := range b.entities {
		samples[i] = gpu.Sample{Device: &b.entities[i].dev, Time: now, Epoch: b.epoch}
	}
	// DCGM samples once per UpdateEvery, so the newest value is up to one
	// period old when read, plus the host engine's scheduling delay. Half a
	// period of slack keeps a value whose successor is just due; a value
	// older than that is one DCGM stopped refreshing, and is left out.
	oldest := now.Add(-maxAge - b.opts.UpdateEvery/2).UnixMicro()
	if now.Sub(b.migChecked) >= b.opts.MIGRescan {
		b.migChecked = now
		if err := b.followMIG(); err != nil {
			return nil, err
		}
		samples = samples[:0]
		for i := range b.entities {
			samples = append(samples, gpu.Sample{Device: &b.entities[i].dev, Time: now, Epoch: b.epoch})
		}
	}
	if !b.base.reads(b.pairs, b.baseIDs) || !b.prof.reads(b.profPairs, b.profIDs) {
		if err := b.newReaders(); err != nil {
			return nil, err
		}
	}
	set := func(v latestValue) { samples[v.entity].Values.Set(v.field, v.x) }
	if err := b.base.read(oldest, set); err != nil {
		return nil, fmt.Errorf("read device fields: %w", err)
	}
	if err := b.prof.read(oldest, set); err != nil {
		return nil, fmt.Errorf("read profiling fields: %w", err)
	}
	// XIDs are events: every value since the last read is one event.
	var xids []dcgm.FieldValue_v2
	if b.wanted[f.XIDErrors] {
		var next time.Time
		var err error
		xids, next, err = dcgm.GetValuesSince(b.group, b.xidFields, b.xidSince)
		if err != nil {
			return nil, fmt.Errorf("read XID events: %w", err)
		}
		b.xidSince = next
	}
	for _, v := range xids {
		i, ok := b.byEntity[dcgm.GroupEntityPair{EntityGroupId: v.EntityGroupId, EntityId: v.EntityID}]
		if !ok || v.Status != 0 {
			continue
		}
		if code := v.Int64(); code > 0 && code < dcgm.DCGM_FT_INT64_BLANK {
			samples[i].XIDs = append(samples[i].XIDs, uint32(code))
		}
	}
	b.checkHealth(now, samples)
	b.nameProfiles(samples)
	// A sample with no fresh value says nothing: leave it out.
	out := samples[:0]
	for _, s := range samples {
		if s.Values.Len() > 0 || len(s.XIDs) > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}

// followMIG lists the MIG instances again and, when they changed (an
// instance created or destroyed while the collector runs), finds the
// entities and sets up the group and the watches anew. The GPUs' counters
// go on: the epoch stays, as the driver did not restart.
func (b *Backend) followMIG() error {
	hier, err := dcgm.GetGPUInstanceHierarchy()
	if err != nil {
		return nil // no MIG hierarchy: nothing to follow
	}
	now := map[dcgm.GroupEntityPair]bool{}
	for i := uint(0); i < hier.Count; i++ {
		if e := hier.EntityList[i].Entity; e.EntityGroupId == dcgm.FE_GPU_I {
			now[e] = true
		}
	}
	known := 0
	for _, e := range b.entities {
		if e.pair.EntityGroupId == dcgm.FE_GPU_I {
			if !now[e.pair] {
				return b.rediscover(len(now))
			}
			known++
		}
	}
	if known != len(now) {
		return b.rediscover(len(now))
	}
	return nil
}

func (b *Backend) rediscover(instances int) error {
	b.opts.Logger.Info("MIG instances changed; following them", zap.Int("mig_instances", instances))
	if err := dcgm.DestroyGroup(b.group); err != nil {
		b.opts.Logger.Debug("Destroy the old GPU group", zap.Error(err))
	}
	if err := b.discover(); err != nil {
		return fmt.Errorf("MIG instances changed: %w", err)
	}
	return nil
}

// nameProfiles names each MIG instance's profile in full (1g.10gb) from
// its memory and its parent's, the first time both are read; until then
// it is its slices (1g), as DCGM's hierarchy gives them.
func (b *Backend) nameProfiles(samples []gpu.Sample) {
	for i := range b.entities {
		e := &b.entities[i]
		if e.dev.MIG == nil || e.slices == 0 || strings.Contains(e.dev.MIG.Profile, ".") {
			continue
		}
		mine, ok := samples[i].Values.Get(f.FBTotal)
		if !ok {
			continue
		}
		for j := range b.entities {
			p := &b.entities[j]
			if p.dev.MIG == nil && p.dev.UUID == e.dev.MIG.ParentUUID {
				if board, ok := samples[j].Values.Get(f.FBTotal); ok && board >= mine {
					e.dev.MIG.Profile = gpu.MIGProfile(e.slices, uint64(board)<<20, uint64(mine))
				}
			}
		}
	}
}

// newReaders makes the readers of the device fields (every entity) and of
// the profiling fields (entities with profiling support).
func (b *Backend) newReaders() error {
	all := make([]int, len(b.pairs))
	for i := range all {
		all[i] = i
	}
	profIndex := make([]int, len(b.profPairs))
	for i, p := range b.profPairs {
		profIndex[i] = b.byEntity[p]
	}
	b.base.close()
	b.prof.close()
	b.base, b.prof = nil, nil
	base, err := newLatestReader(b.pairs, all, b.baseIDs)
	if err != nil {
		return err
	}
	prof, err := newLatestReader(b.profPairs, profIndex, b.profIDs)
	if err != nil {
		base.close()
		return err
	}
	b.base, b.prof = base, prof
	return nil
}

// Close implements backend.Backend.
func (b *Backend) Close() error {
	initMu.Lock()
	defer initMu.Unlock()
	b.closeLocked()
	return nil
}

func (b *Backend) closeLocked() {
	if !b.connected {
		return
	}
	// Shutdown disconnects and unloads the library; groups and watches go
	// with the connection. Disconnecting from a host engine that is already
	// gone fails, which is expected here.
	if err := dcgm.Shutdown(); err != nil {
		b.opts.Logger.Debug("DCGM shutdown", zap.Error(err))
	}
	b.base.close()
	b.prof.close()
	b.base, b.prof = nil, nil
	b.health = healthState{}
	b.connected = false
}
