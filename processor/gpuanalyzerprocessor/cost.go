package gpuanalyzerprocessor

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// CostConfig prices GPU time. Without any price the processor still
// accounts GPU time per usage state (otelgpu.time) but emits no
// otelgpu.cost.
type CostConfig struct {
	// Currency is the ISO 4217 code of the prices, e.g. USD or EUR.
	Currency string `mapstructure:"currency"`
	// DefaultPerGPUHour prices a GPU whose model is not in PerGPUHour.
	DefaultPerGPUHour float64 `mapstructure:"default_per_gpu_hour"`
	// PerGPUHour prices one GPU-hour by hw.model. A key matches a model
	// equal to it or containing it as a whole word ("H100" matches "NVIDIA
	// H100 80GB HBM3" but "L4" does not match "NVIDIA L40S"); the longest
	// matching key wins.
	PerGPUHour map[string]float64 `mapstructure:"per_gpu_hour"`
	// Overrides replace or scale the model's price by a resource attribute:
	// a node's instance type, a spot label, a committed-use contract. The
	// first that matches wins.
	Overrides []PriceOverride `mapstructure:"overrides"`
	// ReportInterval: a GPU's cumulative otelgpu.time and otelgpu.cost
	// are sent at its first sample, whenever its usage state changes, and
	// at least this often (data time); 0 sends them with every sample.
	ReportInterval time.Duration `mapstructure:"report_interval"`
}

// PriceOverride applies to GPUs whose resource attribute Attribute equals
// Value. It sets the price (PerGPUHour) or multiplies the model's price
// (Factor, e.g. 0.35 for spot capacity); exactly one of the two.
type PriceOverride struct {
	Attribute  string   `mapstructure:"attribute"`
	Value      string   `mapstructure:"value"`
	PerGPUHour *float64 `mapstructure:"per_gpu_hour"`
	Factor     *float64 `mapstructure:"factor"`
}

// Validate checks the prices; each error names its key.
func (c *CostConfig) Validate() error {
	var errs problems
	if len(c.Currency) != 3 || strings.ToUpper(c.Currency) != c.Currency || strings.ContainsFunc(c.Currency, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		errs.add("currency must be an ISO 4217 code of three capital letters such as USD, got %q", c.Currency)
	}
	if c.ReportInterval < 0 {
		errs.add("report_interval must not be negative, got %v", c.ReportInterval)
	}
	if !validPrice(c.DefaultPerGPUHour) {
		errs.add("default_per_gpu_hour must be a finite price, not negative, got %v", c.DefaultPerGPUHour)
	}
	for _, model := range slices.Sorted(maps.Keys(c.PerGPUHour)) {
		if strings.TrimSpace(model) == "" {
			errs.add("per_gpu_hour: a model name is empty")
		}
		if p := c.PerGPUHour[model]; !validPrice(p) {
			errs.add("per_gpu_hour::%s must be a finite price, not negative, got %v", model, p)
		}
	}
	return errs.err()
}

// Validate checks one override; each error names its key.
func (o *PriceOverride) Validate() error {
	var errs problems
	if o.Attribute == "" {
		errs.add("attribute must name a resource attribute, e.g. host.type")
	}
	switch {
	case (o.PerGPUHour == nil) == (o.Factor == nil):
		errs.add("set exactly one of per_gpu_hour and factor")
	case o.PerGPUHour != nil && !validPrice(*o.PerGPUHour):
		errs.add("per_gpu_hour must be a finite price, not negative, got %v", *o.PerGPUHour)
	case o.Factor != nil && !validPrice(*o.Factor):
		errs.add("factor must be finite and not negative, got %v", *o.Factor)
	}
	return errs.err()
}

// problems collects a struct's errors into one line: the collector prefixes
// a nested struct's error with its path ("cost::overrides::0: ") once, so
// each key named after it reads in that section.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return errors.New(strings.Join(p, "; "))
}

func validPrice(p float64) bool { return p >= 0 && !math.IsInf(p, 1) }

// enabled says whether any price is configured.
func (c *CostConfig) enabled() bool {
	return c.DefaultPerGPUHour > 0 || len(c.PerGPUHour) > 0 || len(c.Overrides) > 0
}

// pricer finds a GPU's price per hour from its resource attributes.
type pricer struct {
	cfg *CostConfig
	// keys are PerGPUHour's keys, longest first, for matching.
	keys []string
	// byModel caches each model's price: a fleet has a handful of models.
	byModel map[string]float64
}

func newPricer(cfg *CostConfig) *pricer {
	keys := slices.Sorted(maps.Keys(cfg.PerGPUHour))
	slices.SortStableFunc(keys, func(a, b string) int { return len(b) - len(a) })
	return &pricer{cfg: cfg, keys: keys, byModel: map[string]float64{}}
}

// of returns the price per GPU-hour of the GPU with these attributes.
func (p *pricer) of(attrs pcommon.Map) float64 {
	var model string
	if v, ok := attrs.Get(metricnames.AttrHWModel); ok {
		model = v.Str()
	}
	price, ok := p.byModel[model]
	if !ok {
		price = p.modelPrice(model)
		if len(p.byModel) < 1024 {
			p.byModel[model] = price
		}
	}
	for i := range p.cfg.Overrides {
		o := &p.cfg.Overrides[i]
		if v, ok := attrs.Get(o.Attribute); !ok || v.AsString() != o.Value {
			continue
		}
		if o.PerGPUHour != nil {
			return *o.PerGPUHour
		}
		return price * *o.Factor
	}
	return price
}

func (p *pricer) modelPrice(model string) float64 {
	for _, k := range p.keys {
		if containsWord(model, k) {
			return p.cfg.PerGPUHour[k]
		}
	}
	return p.cfg.DefaultPerGPUHour
}

// containsWord reports whether s contains w with neither a letter nor a
// digit right before or after it.
func containsWord(s, w string) bool {
	alnum := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	for i := 0; i+len(w) <= len(s); {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		if (start == 0 || !alnum(s[start-1])) && (end == len(s) || !alnum(s[end])) {
			return true
		}
		i = start + 1
	}
	return false
}
