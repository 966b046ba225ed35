package ncclinspector

import (
	"regexp"
	"strconv"
)

// IBCompletion is one NCCL_DEBUG warning of a failed InfiniBand/RoCE work
// completion: the fabric's own word that a transfer to a peer failed. The
// analyzer takes it as evidence against the link or the peer.
type IBCompletion struct {
	// Host, PID and Device are from the NCCL_DEBUG prefix
	// "<host>:<pid>:<tid> [<cuda device>]"; empty, 0 and -1 when absent.
	Host   string
	PID    int
	Device int
	// Peer is the peer's socket address as NCCL prints it
	// ("10.216.210.236<54862>").
	Peer string
	// Status is the work completion's status (enum ibv_wc_status);
	// StatusName its name (IBVWCStatusName).
	Status     int
	StatusName string
	// Opcode and Len are as printed; the opcode of a failed completion is
	// not defined by ibverbs (issue #1405 shows 32616), so it tells
	// nothing. Len is -1 where the line has none.
	Opcode, Len int
	// VendorErr is the HCA vendor's syndrome (vendor_err).
	VendorErr int
	// Direction is "Recv" or "Send" where the line says; the newest
	// NET/IB form does not.
	Direction string
	// HCA is the local device ("mlx5_0") where the line names it;
	// LocalGID and RemoteGID are printed on RoCE (Ethernet link layer).
	HCA, LocalGID, RemoteGID string
}

// The three forms NCCL has printed (src/transport/net_ib*):
//
//	NET/IB : Got completion from peer P with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid G remoteGidsG
//	NET/IB/GIN: Got completion from peer P with status=12 opcode=0 len=0 vendor err 129 (Recv) ... hca mlx5_0
//	NET/IB: Got completion from peer P with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV(128) vendor_err=129 ... hca mlx5_0
var (
	reIBOld = regexp.MustCompile(`NET/IB(?:/GIN)?\s*: Got completion from peer (\S+) with status=(\d+) opcode=(\d+) len=(\d+) vendor err (\d+) \((\w+)\)`)
	reIBNew = regexp.MustCompile(`NET/IB\s*: Got completion from peer (\S+) with status=\w*\((\d+)\) opcode=\w*\((\d+)\) vendor_err=(\d+)`)
	reIBPfx = regexp.MustCompile(`^\s*([^\s:]+):(\d+):\d+ \[(\d+)\]`)
	reIBGid = regexp.MustCompile(`localGid (\S+)`)
	reIBRem = regexp.MustCompile(`remoteGids ?(\S+)`)
	reIBHCA = regexp.MustCompile(` hca (\S+)`)
)

// ParseIBCompletion reads one NCCL_DEBUG line; ok is false for any other.
func ParseIBCompletion(line string) (IBCompletion, bool) {
	c := IBCompletion{Device: -1, Len: -1}
	if m := reIBOld.FindStringSubmatch(line); m != nil {
		c.Peer, c.Status, c.Opcode, c.Len, c.VendorErr, c.Direction = m[1], num(m[2]), num(m[3]), num(m[4]), num(m[5]), m[6]
	} else if m := reIBNew.FindStringSubmatch(line); m != nil {
		c.Peer, c.Status, c.Opcode, c.VendorErr = m[1], num(m[2]), num(m[3]), num(m[4])
	} else {
		return IBCompletion{}, false
	}
	c.StatusName = IBVWCStatusName(c.Status)
	if m := reIBPfx.FindStringSubmatch(line); m != nil {
		c.Host, c.PID, c.Device = m[1], num(m[2]), num(m[3])
	}
	if m := reIBGid.FindStringSubmatch(line); m != nil {
		c.LocalGID = m[1]
	}
	if m := reIBRem.FindStringSubmatch(line); m != nil {
		c.RemoteGID = m[1]
	}
	if m := reIBHCA.FindStringSubmatch(line); m != nil {
		c.HCA = m[1]
	}
	return c, true
}

// num reads a digit group; one too large for an int is -1.
func num(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// ibvWCStatus names enum ibv_wc_status of libibverbs (rdma-core,
// infiniband/verbs.h), in its order: the value is the index.
var ibvWCStatus = []string{
	"IBV_WC_SUCCESS",
	"IBV_WC_LOC_LEN_ERR",
	"IBV_WC_LOC_QP_OP_ERR",
	"IBV_WC_LOC_EEC_OP_ERR",
	"IBV_WC_LOC_PROT_ERR",
	"IBV_WC_WR_FLUSH_ERR",
	"IBV_WC_MW_BIND_ERR",
	"IBV_WC_BAD_RESP_ERR",
	"IBV_WC_LOC_ACCESS_ERR",
	"IBV_WC_REM_INV_REQ_ERR",
	"IBV_WC_REM_ACCESS_ERR",
	"IBV_WC_REM_OP_ERR",
	"IBV_WC_RETRY_EXC_ERR",
	"IBV_WC_RNR_RETRY_EXC_ERR",
	"IBV_WC_LOC_RDD_VIOL_ERR",
	"IBV_WC_REM_INV_RD_REQ_ERR",
	"IBV_WC_REM_ABORT_ERR",
	"IBV_WC_INV_EECN_ERR",
	"IBV_WC_INV_EEC_STATE_ERR",
	"IBV_WC_FATAL_ERR",
	"IBV_WC_RESP_TIMEOUT_ERR",
	"IBV_WC_GENERAL_ERR",
	"IBV_WC_TM_ERR",
	"IBV_WC_TM_RNDV_INCOMPLETE",
}

// IBVWCStatusName names a work-completion status; "IBV_WC_STATUS_<n>" for
// one libibverbs does not define. 12 (IBV_WC_RETRY_EXC_ERR) is the
// transport retry counter running out: the peer stopped acknowledging,
// a link or switch problem more often than a software one.
func IBVWCStatusName(status int) string {
	if status >= 0 && status < len(ibvWCStatus) {
		return ibvWCStatus[status]
	}
	return "IBV_WC_STATUS_" + strconv.Itoa(status)
}
