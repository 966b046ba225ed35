package gpuremediationconnector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
)

// This file is the device_taint action: where schedulers look on a cluster
// with Dynamic Resource Allocation. A DeviceTaintRule (KEP-5055) with
// effect NoSchedule on the GPU's device, and on each partition of it,
// keeps new claims off that GPU alone; the node taint and the cordon keep
// every new pod off the whole node.
//
// NoSchedule, never NoExecute: a NoExecute device taint has the
// device-taint-eviction controller delete the pods using the device at
// once, past their PodDisruptionBudgets, drain::max_concurrent and the
// kubectl-drain rules this component's drain follows. The GPU's pods go
// through the drain step instead.

// stepDeviceTaint writes the DeviceTaintRules; it comes before the node
// taint, which it may replace for a GPU reset (dra::instead_of_node_taint).
const stepDeviceTaint = "device_taint"

// draAPI is what the device_taint action needs from Kubernetes
// (*kube.Client).
type draAPI interface {
	GPUDevices(ctx context.Context, driver, node, gpu string) ([]kube.Device, error)
	TaintDevices(ctx context.Context, driver, node, gpu, value, incident string) ([]string, error)
	DeviceTaintRules(ctx context.Context, gpu string) ([]string, error)
	UntaintDevices(ctx context.Context, gpu string) ([]string, error)
}

// deviceTaint runs the device_taint step. A GPU that is no device of
// dra::driver, an API server that serves no DeviceTaintRules, and RBAC that
// does not grant them all leave the step as not written, with a warning,
// and the plan goes on: the device's taint adds to the node's actions and
// must never hold them back. Any other error is retried as every step's.
func (r *remediator) deviceTaint(ctx context.Context, p *plan) (int, string, error) {
	d := p.d
	names, err := r.api.TaintDevices(ctx, r.cfg.DRA.Driver, d.node, d.gpu, strings.ReplaceAll(d.fault.String(), "_", "-"), p.incident)
	if skip, why := deviceTaintSkipped(err); skip {
		r.logger.Warn("DRA device taint not written; the remediation goes on without it",
			zap.String("node", d.node), zap.String("gpu", d.gpu), zap.String("incident", p.incident), zap.String("why", why))
		p.devices = nil
		return 1, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	p.devices = names
	if len(names) == 0 {
		r.logger.Info("GPU is no DRA device: no device taint", zap.String("node", d.node), zap.String("gpu", d.gpu), zap.String("driver", r.cfg.DRA.Driver))
		return 1, "", nil
	}
	if r.cfg.DRA.InsteadOfNodeTaint && p.rem == policy.ResetGPU {
		// The device's taint keeps new claims off the GPU; the node's other
		// GPUs keep taking new pods while this one is reset.
		if i := slices.Index(p.steps, stepTaint); i > p.next {
			p.steps = slices.Delete(slices.Clone(p.steps), i, i+1)
		}
	}
	return 1, "DeviceTaintRule " + strings.Join(names, ", "), nil
}

// deviceTaintSkipped says whether err means the action cannot be done on
// this cluster, rather than that the API failed for now.
func deviceTaintSkipped(err error) (bool, string) {
	switch {
	case err == nil:
		return false, ""
	case errors.Is(err, kube.ErrNoDeviceTaintRules):
		return true, err.Error()
	case apierrors.IsForbidden(err):
		return true, "forbidden (does the ClusterRole grant devicetaintrules and resourceslices?): " + err.Error()
	case apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err):
		return true, "not served: " + err.Error()
	}
	return false, ""
}

// wrote says whether a step that completed wrote to the cluster (and so
// counts as an action): a device taint on a GPU that is no DRA device
// wrote nothing.
func (p *plan) wrote(step string) bool {
	return writes(step) && (step != stepDeviceTaint || len(p.devices) > 0)
}

// dryDeviceTaint, in dry run, reads which rules the step would write (the
// ResourceSlices, read only); without an API, or when the read fails, it
// says what it would look for.
func (r *remediator) dryDeviceTaint(ctx context.Context, p *plan) string {
	if !slices.Contains(p.steps, stepDeviceTaint) {
		return ""
	}
	d := p.d
	p.devices = []string{"?"}
	unknown := fmt.Sprintf("DeviceTaintRules for the devices of %s whose uuid or parentUUID is %s, if there are any", r.cfg.DRA.Driver, d.gpu)
	if r.api == nil {
		return unknown
	}
	devices, err := r.api.GPUDevices(ctx, r.cfg.DRA.Driver, d.node, d.gpu)
	if err != nil {
		return unknown + " (ResourceSlices unread: " + err.Error() + ")"
	}
	p.devices = p.devices[:0]
	for _, dev := range devices {
		p.devices = append(p.devices, kube.DeviceTaintRuleName(d.gpu, dev))
	}
	if len(p.devices) == 0 {
		return ""
	}
	return "DeviceTaintRule " + strings.Join(p.devices, ", ")
}

// stepDetail is what an action's log record says beyond its name.
func (p *plan) stepDetail(step, deviceDetail string) string {
	if step == stepDeviceTaint {
		return deviceDetail
	}
	return ""
}

// untaintDevices deletes the GPU's DeviceTaintRules once it is healthy
// again: only those this component wrote (by their labels), a person's
// left. Done for every healthy GPU, even one whose node another incident
// still holds: the taint is the device's, and this device is healthy.
func (r *remediator) untaintDevices(ctx context.Context, p *plan) error {
	if !r.cfg.Actions.DeviceTaint {
		return nil
	}
	names, err := r.api.UntaintDevices(ctx, p.d.gpu)
	if skip, why := deviceTaintSkipped(err); skip {
		r.logger.Warn("DRA device taints not read; none removed", zap.String("gpu", p.d.gpu), zap.String("why", why))
		return nil
	}
	if err != nil {
		return err
	}
	if len(names) > 0 {
		r.logger.Info("DRA device taints removed", zap.String("gpu", p.d.gpu), zap.Strings("rules", names))
	}
	return nil
}

// deviceStillTainted says, for a GPU waiting for a person after a reset
// that replaced its node taint with the device's, whether the person has
// yet to take it back by deleting the DeviceTaintRules.
func (r *remediator) deviceStillTainted(ctx context.Context, gpu string) (bool, error) {
	if !r.cfg.Actions.DeviceTaint || !r.cfg.DRA.InsteadOfNodeTaint {
		return false, nil
	}
	names, err := r.api.DeviceTaintRules(ctx, gpu)
	if skip, _ := deviceTaintSkipped(err); skip {
		return false, nil
	}
	return len(names) > 0, err
}
