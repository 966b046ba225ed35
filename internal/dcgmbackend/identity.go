package dcgmbackend

// Each GPU's identity and the board's static figures, read once at
// discovery: model, UUID, PCI bus ID, serial, VBIOS, temperature limits.

import (
	"fmt"
	"strings"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// DCGM field IDs of the identity strings, and of the board's static
// figures read with them (dcgm_fields.h).
const (
	fieldDriverVersion = 1
	fieldName          = 50
	fieldSerial        = 53
	fieldUUID          = 54
	fieldPCIBusID      = 57
	fieldVBIOSVersion  = 85
	fieldMemMaxOpTemp  = 151 // DCGM_FI_DEV_MEM_MAX_OP_TEMP: above it the memory slows down
	fieldSlowdownTemp  = 158 // DCGM_FI_DEV_SLOWDOWN_TEMP
	fieldShutdownTemp  = 159 // DCGM_FI_DEV_SHUTDOWN_TEMP
)

// temperatureThresholds are the thresholds read with the identity, and
// what each is.
var temperatureThresholds = map[dcgm.Short]gpu.TempLimit{
	fieldSlowdownTemp: {Sensor: gpu.SensorDie, Kind: gpu.LimitSlowdown},
	fieldShutdownTemp: {Sensor: gpu.SensorDie, Kind: gpu.LimitShutdown},
	fieldMemMaxOpTemp: {Sensor: gpu.SensorMemory, Kind: gpu.LimitSlowdown},
}

// readIdentities reads each entity's model, UUID, PCI bus ID and the
// driver version.
func (b *Backend) readIdentities() error {
	idFields := []dcgm.Short{fieldName, fieldUUID, fieldPCIBusID, fieldSerial, fieldVBIOSVersion,
		fieldSlowdownTemp, fieldShutdownTemp, fieldMemMaxOpTemp}
	idGroup, err := dcgm.FieldGroupCreate("otelcol-gpu-identity", idFields)
	if err != nil {
		return fmt.Errorf("create identity field group: %w", err)
	}
	if err := dcgm.WatchFieldsWithGroupEx(idGroup, b.group, int64(time.Minute/time.Microsecond), 3600, 1); err != nil {
		return fmt.Errorf("watch identity fields: %w", err)
	}
	ids, err := dcgm.EntitiesGetLatestValues(b.pairs, idFields, 0)
	if err != nil {
		return fmt.Errorf("read GPU identities: %w", err)
	}
	for i := range b.entities {
		b.entities[i].dev.TempLimits = nil // read anew below
	}
	driver := ""
	if vs, err := dcgm.EntitiesGetLatestValues([]dcgm.GroupEntityPair{{EntityGroupId: dcgm.FE_NONE}}, []dcgm.Short{fieldDriverVersion}, 0); err == nil && len(vs) == 1 && vs[0].Status == 0 {
		driver = vs[0].String()
	}
	for _, v := range ids {
		i, ok := b.byEntity[dcgm.GroupEntityPair{EntityGroupId: v.EntityGroupId, EntityId: v.EntityID}]
		if !ok || v.Status != 0 {
			continue
		}
		d := &b.entities[i].dev
		switch v.FieldID {
		case fieldName:
			d.Model = v.String()
		case fieldUUID:
			d.UUID = v.String()
		case fieldPCIBusID:
			d.PCIBusID = v.String()
		case fieldSerial:
			d.SerialNumber = identityString(v.String())
		case fieldVBIOSVersion:
			d.FirmwareVersion = identityString(v.String())
		default:
			// A threshold is the board's: a MIG instance's is its
			// GPU's, reported there.
			if l, ok := temperatureThresholds[v.FieldID]; ok && b.entities[i].pair.EntityGroupId == dcgm.FE_GPU {
				if c := v.Int64(); c > 0 && c < 200 {
					l.Celsius = float64(c)
					d.TempLimits = append(d.TempLimits, l)
				}
			}
		}
	}
	for i := range b.entities {
		e := &b.entities[i]
		e.dev.DriverVersion = driver
		e.dev.Host = b.opts.Hostname
		if e.pair.EntityGroupId == dcgm.FE_GPU {
			e.dev.Index = int(e.pair.EntityId)
		}
	}
	return nil
}

// identityString returns a string field's value, or "" for DCGM's blanks
// (<<<NULL>>>, <<<NOT_SUPPORTED>>>, ...): a consumer board has no serial.
func identityString(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<<<") {
		return ""
	}
	return s
}
