package whatif

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Command runs `gpureplay -whatif SETTINGS.yaml DEMAND.csv`: the
// evaluations and the summary go to out. With compare, out instead gets the
// reactive frontier's points, the settings' summary and the comparison,
// one JSON line each.
func Command(settingsPath, demandPath string, opts Options, compare bool, out io.Writer) error {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return err
	}
	settings, err := LoadSettings(settingsPath)
	if err != nil {
		return err
	}
	f, err := os.Open(demandPath)
	if err != nil {
		return err
	}
	defer f.Close()
	demand, err := ReadDemand(f, demandPath)
	if err != nil {
		return err
	}
	demand = opts.demand(demand)
	if !compare {
		if _, err := Run(settings, demand, opts, out); err != nil {
			return fmt.Errorf("%s: %w", settingsPath, err)
		}
		return nil
	}
	frontier, err := Frontier(demand, opts)
	if err != nil {
		return err
	}
	sum, err := Run(settings, demand, opts, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", settingsPath, err)
	}
	enc := json.NewEncoder(out)
	for _, p := range frontier {
		if err := enc.Encode(p); err != nil {
			return err
		}
	}
	if err := enc.Encode(Point{Name: "settings", Summary: sum}); err != nil {
		return err
	}
	return enc.Encode(Compare(sum, frontier, floorGPUHours(demand)))
}

// OneLine joins a multi-line error into one line, as the command reports
// errors on one line.
func OneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}
