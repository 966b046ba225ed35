package analysis

import "time"

// The memory leak fit is a least-squares line through a GPU's frame buffer
// use over a trailing window (30 min: 1,800 samples at 1 s). Keeping the
// samples would take 28 KiB per GPU; instead the window is cut into
// leakBuckets - 1 aligned buckets (60 s each for 30 min), and each bucket
// keeps the sums that least squares needs: n, Σu, Σw, Σu², Σuw, Σw², with u
// and w the time and use relative to the bucket's first sample (so that the
// sums stay small and exact enough in float64). Sums add up, so the fit over
// the buckets is the exact fit over every sample in them; what the buckets
// cost is only the granularity of forgetting: a bucket is dropped whole once
// its first sample is older than the window, so the fit covers between the
// window less one bucket and the whole window. 31 buckets of 56 bytes: 1.7
// KiB per GPU.
const leakBuckets = 31

type leakBucket struct {
	t0 int64   // first sample's time, Unix ns
	n  uint32  // samples
	y0 float32 // first sample's use, bytes (integral MiB are exact)
	// Sums over the bucket's samples of u = t - t0 (seconds) and w = y - y0.
	su, sw, suu, suw, sww float64
}

// sums are the least-squares sums of a set of samples, relative to an origin.
type sums struct{ n, su, sw, suu, suw, sww float64 }

// shifted returns the bucket's sums relative to the origin (t, y): each u
// grows by s = t0 - t and each w by d = y0 - y.
func (b *leakBucket) shifted(t int64, y float64) sums {
	n := float64(b.n)
	s, d := float64(b.t0-t)/1e9, float64(b.y0)-y
	return sums{
		n:   n,
		su:  b.su + n*s,
		sw:  b.sw + n*d,
		suu: b.suu + 2*s*b.su + n*s*s,
		suw: b.suw + s*b.sw + d*b.su + n*s*d,
		sww: b.sww + 2*d*b.sw + n*d*d,
	}
}

func (x *sums) add(y sums) {
	x.n, x.su, x.sw, x.suu, x.suw, x.sww = x.n+y.n, x.su+y.su, x.sw+y.sw, x.suu+y.suu, x.suw+y.suw, x.sww+y.sww
}

type leakFit struct {
	buckets [leakBuckets]leakBucket
	head, n int
	width   int64 // bucket width, ns
	window  int64
	last    int64   // latest sample's time
	free    float64 // latest FB free, bytes
	// closed are the sums of every bucket but the newest, relative to the
	// oldest bucket's origin; recomputed only when the buckets change, so
	// that a sample costs a constant few operations.
	closed      sums
	closedValid bool
}

func newLeakFit(window time.Duration) *leakFit {
	w := int64(window)
	return &leakFit{window: w, width: max(w/(leakBuckets-1), 1)}
}

func (l *leakFit) at(i int) *leakBucket { return &l.buckets[(l.head+i)%leakBuckets] }

// add records a sample: FB used and free in bytes at time t.
func (l *leakFit) add(t int64, used, free float64) {
	l.last, l.free = t, free
	for l.n > 0 && l.at(0).t0 <= t-l.window {
		l.head = (l.head + 1) % leakBuckets
		l.n--
		l.closedValid = false
	}
	if l.n == 0 || l.at(l.n-1).t0/l.width != t/l.width {
		if l.n == leakBuckets { // only with a window shorter than its buckets
			l.head = (l.head + 1) % leakBuckets
			l.n--
		}
		*l.at(l.n) = leakBucket{t0: t, y0: float32(used)}
		l.n++
		l.closedValid = false
	}
	b := l.at(l.n - 1)
	u, w := float64(t-b.t0)/1e9, used-float64(b.y0)
	b.n++
	b.su += u
	b.sw += w
	b.suu += u * u
	b.suw += u * w
	b.sww += w * w
}

// fit returns the slope (bytes per second) and R² of the line through the
// window's samples, and the time they span.
func (l *leakFit) fit() (slope, r2 float64, span time.Duration) {
	if l.n == 0 {
		return 0, 0, 0
	}
	first := l.at(0)
	t, y := first.t0, float64(first.y0)
	if !l.closedValid {
		l.closed = sums{}
		for i := 0; i < l.n-1; i++ {
			l.closed.add(l.at(i).shifted(t, y))
		}
		l.closedValid = true
	}
	s := l.closed
	s.add(l.at(l.n-1).shifted(t, y))
	span = time.Duration(l.last - t)
	stt := s.suu - s.su*s.su/s.n
	sty := s.suw - s.su*s.sw/s.n
	syy := s.sww - s.sw*s.sw/s.n
	if stt <= 0 || syy <= 0 {
		return 0, 0, span // one instant, or no change at all
	}
	return sty / stt, sty * sty / (stt * syy), span
}

// verdict returns whether the leak condition holds and whether its resolve
// condition holds; before the samples span MinSpan, neither.
func (l *leakFit) verdict(r *LeakRules) (hold, resolve bool) {
	slope, r2, span := l.fit()
	if span < r.MinSpan {
		return false, false
	}
	if slope <= 0 {
		return false, true // no growth
	}
	full := l.free / slope // seconds until the frame buffer is full
	return r2 >= r.MinR2 && full <= r.FullIn.Seconds(),
		r2 < r.ResolveR2 || full > r.ResolveIn.Seconds()
}
