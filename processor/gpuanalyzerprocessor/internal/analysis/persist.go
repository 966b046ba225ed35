package analysis

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// What survives a restart, per GPU: alert states with the time each became
// pending (as Prometheus keeps ALERTS_FOR_STATE), the straggler state and
// its timers, the memory leak fit, fault evidence, and the class with its
// time counters. The window of means is not kept: it refills within one
// window. Counter baselines are not kept either: the receiver restarts
// its counters with the collector.
//
// The encoding is binary, little-endian, versioned; a state of another
// version is refused rather than misread. Version 2 keeps the leak fit in
// bytes, as the receiver reports the frame buffer; version 1 kept it in MiB
// and is still read (scaled by 2^20, which is exact), so that an upgrade
// keeps the state.
const stateVersion = 2

// mib scales a version 1 state's frame buffer figures to bytes.
const mib = 1 << 20

// Save calls fn with each tracked GPU's lasting state. The bytes are valid
// only during the call.
func (a *Analyzer) Save(fn func(id string, state []byte)) {
	var b []byte
	for id, g := range a.gpus {
		b = g.encode(b[:0])
		fn(id, b)
	}
}

// Restore takes back a GPU's state saved by Save. The GPU continues where
// it was at its next sample, unless that comes more than the TTL after the
// saved one: then it starts afresh. A GPU already tracked is left as it is.
func (a *Analyzer) Restore(id string, state []byte) error {
	if _, ok := a.gpus[id]; ok {
		return nil
	}
	if len(a.gpus) >= a.cfg.MaxGPUs {
		return fmt.Errorf("GPU %s: max_gpus reached", id)
	}
	g := &gpuState{id: id, ring: make([]point, 8), restored: true, evaluated: true}
	if err := g.decode(state, a.cfg.Leak.Window); err != nil {
		return fmt.Errorf("GPU %s: %w", id, err)
	}
	a.gpus[id] = g
	return nil
}

func (g *gpuState) encode(b []byte) []byte {
	b = append(b, stateVersion, byte(NumClasses), byte(NumAlerts))
	b = binary.AppendVarint(b, g.last)
	b = binary.AppendVarint(b, g.classStart)
	b = append(b, byte(g.class), byte(g.hint))
	for _, s := range g.classSeconds {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s))
	}
	var flags byte
	for i, f := range []bool{g.straggler, g.deviating, g.hasFault, g.leak != nil} {
		if f {
			flags |= 1 << i
		}
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, g.devSince)
	b = binary.AppendVarint(b, g.calmSince)
	b = binary.AppendVarint(b, g.faultAt)
	for i, st := range g.alerts {
		b = append(b, byte(st))
		b = binary.AppendVarint(b, g.alertSince[i])
	}
	if l := g.leak; l != nil {
		b = binary.AppendVarint(b, l.width)
		b = binary.AppendVarint(b, l.last)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.free))
		b = append(b, byte(l.n))
		for i := range l.n {
			k := l.at(i)
			b = binary.AppendVarint(b, k.t0)
			b = binary.AppendUvarint(b, uint64(k.n))
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(k.y0))
			for _, x := range [...]float64{k.su, k.sw, k.suu, k.suw, k.sww} {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			}
		}
	}
	return b
}

var errState = errors.New("truncated or malformed state")

// reader decodes, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.err = errState
		return 0
	}
	x := r.b[0]
	r.b = r.b[1:]
	return x
}

func (r *reader) varint() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errState
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *reader) uvarint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errState
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *reader) f64() float64 {
	if len(r.b) < 8 {
		r.err = errState
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return x
}

func (r *reader) f32() float32 {
	if len(r.b) < 4 {
		r.err = errState
		return 0
	}
	x := math.Float32frombits(binary.LittleEndian.Uint32(r.b))
	r.b = r.b[4:]
	return x
}

func (g *gpuState) decode(b []byte, leakWindow time.Duration) error {
	r := &reader{b: b}
	v, nc, na := r.byte(), r.byte(), r.byte()
	if r.err == nil && ((v != stateVersion && v != 1) || nc != byte(NumClasses) || na != byte(NumAlerts)) {
		return fmt.Errorf("state of version %d (%d classes, %d alerts); want version %d", v, nc, na, stateVersion)
	}
	g.last = r.varint()
	g.classStart = r.varint()
	g.class, g.hint = Class(r.byte()), Hint(r.byte())
	for i := range g.classSeconds {
		g.classSeconds[i] = r.f64()
	}
	flags := r.byte()
	g.straggler, g.deviating, g.hasFault = flags&1 != 0, flags&2 != 0, flags&4 != 0
	g.devSince = r.varint()
	g.calmSince = r.varint()
	g.faultAt = r.varint()
	for i := range g.alerts {
		g.alerts[i] = AlertState(r.byte())
		g.alertSince[i] = r.varint()
	}
	if flags&8 != 0 {
		l := newLeakFit(leakWindow)
		width := r.varint()
		l.last = r.varint()
		l.free = r.f64()
		n := int(r.byte())
		if n > leakBuckets {
			return errState
		}
		for i := range n {
			k := &l.buckets[i]
			k.t0 = r.varint()
			k.n = uint32(r.uvarint())
			k.y0 = r.f32()
			k.su, k.sw, k.suu, k.suw, k.sww = r.f64(), r.f64(), r.f64(), r.f64(), r.f64()
			if v == 1 {
				k.y0, k.sw, k.suw, k.sww = k.y0*mib, k.sw*mib, k.suw*mib, k.sww*mib*mib
			}
		}
		if v == 1 {
			l.free *= mib
		}
		l.n = n
		// A fit made with other buckets (another window) is not continued.
		if width == l.width {
			g.leak = l
		}
	}
	if r.err != nil {
		return r.err
	}
	if g.class >= NumClasses || g.hint >= NumHints {
		return errState
	}
	for _, st := range g.alerts {
		if st > Firing {
			return errState
		}
	}
	g.prevClass, g.prevHint = g.class, g.hint
	return nil
}
