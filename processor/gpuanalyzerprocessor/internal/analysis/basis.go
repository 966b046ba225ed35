package analysis

// Evidence names the reading a class rests on, so that a user knows how far
// to trust it: a class read from SM activity is measured, one read from the
// graphics engine's activity (an upper bound of SM activity) or from power is
// inferred.
type Evidence uint8

// The evidence a class can rest on.
const (
	// NoEvidence: unknown, or a class the GPU has not been evaluated for.
	NoEvidence Evidence = iota
	// EvidenceErrors: faulted, by an uncorrectable ECC error, a critical
	// XID, a failed row remapping or an AMD fatal RAS record.
	EvidenceErrors
	// EvidenceClockReasons: throttled, by the clock event reasons NVIDIA
	// reports (AMD: its violation status).
	EvidenceClockReasons
	// EvidencePowerCap: throttled without clock event reasons, by power at
	// the GPU's limit while its SM clock is far below its maximum.
	EvidencePowerCap
	// EvidenceThermal: throttled without clock event reasons, by a
	// temperature at the slowdown range while its SM clock is far below its
	// maximum.
	EvidenceThermal
	// EvidenceSMActive: SM activity, the profiling field the classes were
	// defined on.
	EvidenceSMActive
	// EvidenceGREngine: the graphics engine's activity, with tensor
	// activity and power to tell work from resident kernels doing little.
	EvidenceGREngine
	// EvidenceDRAMActive: memory bound by DRAM activity.
	EvidenceDRAMActive
	// EvidenceUMCActivity: memory bound by an AMD GPU's memory controller
	// activity.
	EvidenceUMCActivity
	// EvidenceNVLink: communication bound by NVLink traffic.
	EvidenceNVLink
	// EvidenceXGMI: communication bound by an AMD GPU's XGMI traffic.
	EvidenceXGMI
	// EvidencePCIe: communication bound by symmetric PCIe traffic that the
	// job's peers share: GPUDirect RDMA to the network.
	EvidencePCIe
	// EvidencePower: GPU utilization and power without profiling fields:
	// busy at a fraction of its power is waiting (with peers that wait
	// too, in a collective).
	EvidencePower
	// EvidenceUtilization: GPU utilization alone (idle).
	EvidenceUtilization
	// EvidenceNIC: communication bound over the network by its rail's NIC
	// carrying a collective (as much each way) while the GPU waits
	// (Explainer.RailCollective).
	EvidenceNIC
	NumEvidence
)

var evidenceNames = [NumEvidence]string{"", "errors", "clock_reasons", "power_cap", "thermal", "sm_active", "gr_engine",
	"dram_active", "umc_activity", "nvlink", "xgmi", "pcie", "power", "utilization", "nic"}

// String is the evidence's name; empty for NoEvidence.
func (e Evidence) String() string { return evidenceNames[e] }

// Scope says where a communication-bound GPU's collective runs.
type Scope uint8

// The scopes; NoScope for every other class, and for a collective that
// only its peers' waiting tells (power alone says nothing of the link).
const (
	NoScope Scope = iota
	// ScopeNVLink: within the node, over NVLink.
	ScopeNVLink
	// ScopeNetwork: across nodes, through the GPU's PCIe link to the NIC.
	ScopeNetwork
	// ScopeXGMI: within the node, over an AMD GPU's XGMI links.
	ScopeXGMI
	NumScopes
)

var scopeNames = [NumScopes]string{"", "nvlink", "network", "xgmi"}

// String is the scope's name; empty for NoScope.
func (s Scope) String() string { return scopeNames[s] }

// Basis is what a class rests on and, for communication_bound, its scope.
type Basis struct {
	Evidence Evidence
	Scope    Scope
}

func basis(e Evidence) Basis { return Basis{Evidence: e} }
