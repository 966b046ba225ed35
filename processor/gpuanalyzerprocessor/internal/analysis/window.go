package analysis

import "math/bits"

// push adds a point to the window and drops the points that left it,
// keeping the running sums that the window's means come from. A GPU sampled
// more slowly than the window would leave it holding its latest sample
// alone: the previous sample stays in, so that the window holds at least
// two, unless the time since it is a gap (longer than gapLimit, itself
// longer than the window).
func (g *gpuState) push(p point, window, gapLimit int64) {
	g.widened = false
	for g.n > 0 && g.ring[g.head].t <= p.t-window {
		if g.n == 1 && gapLimit > window && p.t-g.ring[g.head].t <= gapLimit {
			g.widened = true
			break
		}
		g.drop()
	}
	if g.n == len(g.ring) {
		if len(g.ring) < maxWindowPoints {
			grown := make([]point, min(2*len(g.ring), maxWindowPoints))
			for i := 0; i < g.n; i++ {
				grown[i] = g.ring[(g.head+i)%len(g.ring)]
			}
			g.ring, g.head = grown, 0
		} else {
			g.drop()
		}
	}
	g.ring[(g.head+g.n)%len(g.ring)] = p
	g.n++
	g.account(&p, 1)
	g.pushes++
	if g.pushes >= resumEvery {
		g.resum()
	}
}

// drop removes the oldest point.
func (g *gpuState) drop() {
	g.account(&g.ring[g.head], -1)
	g.head = (g.head + 1) % len(g.ring)
	g.n--
	if g.n == 0 {
		g.resum() // exactly zero, whatever rounding left
	}
}

// account adds (sign 1) or removes (sign -1) a point from the running sums.
func (g *gpuState) account(p *point, sign int32) {
	for m := p.present; m != 0; m &= m - 1 {
		j := bits.TrailingZeros16(m)
		g.sum[j] += float64(sign) * float64(p.v[j])
		g.cnt[j] += sign
	}
	if p.flags&pReasons != 0 {
		g.nReasons += sign
		if p.flags&pThrottled != 0 {
			g.nThrottled += sign
		}
	}
	if p.flags&pPCIe != 0 {
		g.nPCIe += sign
		if p.flags&pCollective != 0 {
			g.nCollective += sign
		}
	}
	if p.flags&pClocked != 0 {
		g.nClocked += sign
		switch {
		case p.flags&pCapped != 0:
			g.nCapped += sign
		case p.flags&pHot != 0:
			g.nHot += sign
		}
	}
}

// resum recomputes the running sums from the window's points.
func (g *gpuState) resum() {
	g.sum, g.cnt, g.nReasons, g.nThrottled, g.pushes = [numWindowed]float64{}, [numWindowed]int32{}, 0, 0, 0
	g.nPCIe, g.nCollective, g.nClocked, g.nCapped, g.nHot = 0, 0, 0, 0, 0
	for i := 0; i < g.n; i++ {
		g.account(&g.ring[(g.head+i)%len(g.ring)], 1)
	}
}

// window sets s to the window's means, in place (a GPU's stats are
// computed for every GPU of every batch).
func (g *gpuState) window(s *stats) {
	s.nReasons, s.nThrottled = int(g.nReasons), int(g.nThrottled)
	s.nPCIe, s.nCollective = int(g.nPCIe), int(g.nCollective)
	s.nClocked, s.nCapped, s.nHot = int(g.nClocked), int(g.nCapped), int(g.nHot)
	for j := range numWindowed {
		s.mean[j] = 0
		if s.n[j] = int(g.cnt[j]); s.n[j] > 0 {
			s.mean[j] = g.sum[j] / float64(s.n[j])
		}
	}
}

// usageStats are the readings a GPU's usage is read from. With SM activity,
// the window's (unwidened): SM activity is DCGM's own average over its
// sampling period. Without it, the latest sample's own: GPU utilization and
// power are instantaneous readings that flip within a second between work
// and a wait, and a window's mean would bill a 16 s checkpoint wait in a
// 30 s window as work (the real 8×H100 recording in testdata/real).
func (g *gpuState) usageStats(latest *stats) *stats {
	if g.cur.n[wSM] > 0 || g.n == 0 {
		return g.unwidened(&g.cur)
	}
	p := &g.ring[(g.head+g.n-1)%len(g.ring)]
	if p.present&(1<<wUtil|1<<wPower) == 0 {
		return g.unwidened(&g.cur) // the previous sample tells
	}
	s := latest
	*s = stats{}
	for _, j := range [...]int{wUtil, wPower} {
		if p.present&(1<<j) != 0 {
			s.n[j], s.mean[j] = 1, float64(p.v[j])
		}
	}
	return s
}

// unwidened returns the window's means without the previous sample that
// push kept past the window (cur itself when it kept none): what the GPU did
// within the window, for its usage. The class reads the widened window, as
// two samples tell a class better than one; usage is accounting, and
// counting one busy sample into the next interval as well would overstate
// the time a GPU sampled every minute was used. A latest sample without SM
// activity or utilization leaves the previous one to tell.
func (g *gpuState) unwidened(cur *stats) *stats {
	if !g.widened {
		return cur
	}
	p := &g.ring[g.head]
	s := *cur
	for _, j := range [...]int{wSM, wUtil} {
		if p.present&(1<<j) != 0 {
			s.n[j] = int(g.cnt[j]) - 1
			s.mean[j] = 0
			if s.n[j] > 0 {
				s.mean[j] = (g.sum[j] - float64(p.v[j])) / float64(s.n[j])
			}
		}
	}
	if s.n[wSM] == 0 && s.n[wUtil] == 0 {
		return cur // the latest sample has no activity reading: the previous one tells
	}
	return &s
}
