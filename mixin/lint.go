// Package mixin holds the checks of the monitoring mixin's generated files
// that promtool does not make: a lint of the Grafana dashboards, and a
// runbook for every alert. The mixin itself is jsonnet (mixin.libsonnet).
package mixin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// promql is Prometheus' parser without its experimental functions and
// syntax: the dashboards must work on a Prometheus that has not enabled
// them.
var promql = parser.NewParser(parser.Options{})

// variableRef is a variable in a query, as Grafana writes them: $name,
// ${name} or ${name:format}, and the deprecated [[name]].
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// builtins are Grafana's own variables: what a query may use without
// defining it, and the value it is parsed with.
var builtins = map[string]string{
	"__interval": "1m", "__rate_interval": "1m", "__range": "1h", "__interval_ms": "60000",
	"__range_s": "3600", "__range_ms": "3600000", "__all": ".*",
}

type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Datasource *datasource     `json:"datasource"`
	Query      json.RawMessage `json:"query"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a row's
}

// LintDashboard checks one dashboard's JSON and returns what is wrong:
// a uid and a title; a datasource variable that every panel uses; unique
// panel ids; every panel's targets with unique refIds and a query that
// Prometheus' parser accepts once its variables are filled in; every
// variable a query uses defined. It returns the dashboard's uid, for the
// caller to check uids across dashboards.
func LintDashboard(raw []byte) (string, []error) {
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", []error{fmt.Errorf("not a dashboard's JSON: %w", err)}
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if d.UID == "" {
		fail("no uid: Grafana would make one up at every import, breaking links to the dashboard")
	}
	if d.Title == "" {
		fail("no title")
	}

	// Every variable's value, as the query is parsed with it: a query
	// variable at All (its allValue in these dashboards).
	values := map[string]string{}
	datasources := map[string]bool{}
	for _, v := range d.Templating.List {
		if v.Name == "" {
			fail("a variable without a name")
			continue
		}
		if _, dup := values[v.Name]; dup {
			fail("variable %q defined twice", v.Name)
		}
		values[v.Name] = ".*"
		if v.Type == "datasource" {
			datasources[v.Name] = true
		}
	}
	if len(datasources) == 0 {
		fail("no datasource variable: the dashboard would be bound to one Prometheus")
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		if err := checkDatasource(v.Datasource, datasources); err != nil {
			fail("variable %q: %v", v.Name, err)
		}
		if err := checkVariableQuery(v.Query, values); err != nil {
			fail("variable %q: %v", v.Name, err)
		}
	}

	ids := map[int]string{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if p.ID <= 0 {
				fail("%s: no id", where)
			} else if other, dup := ids[p.ID]; dup {
				fail("%s: id %d is also panel %q's", where, p.ID, other)
			}
			ids[p.ID] = p.Title
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if err := checkDatasource(p.Datasource, datasources); err != nil {
				fail("%s: %v", where, err)
			}
			if len(p.Targets) == 0 {
				fail("%s: no targets", where)
			}
			refIDs := map[string]bool{}
			for _, t := range p.Targets {
				if t.RefID == "" || refIDs[t.RefID] {
					fail("%s: target refId %q missing or repeated", where, t.RefID)
				}
				refIDs[t.RefID] = true
				if err := checkQuery(t.Expr, values); err != nil {
					fail("%s: target %s: %v", where, t.RefID, err)
				}
			}
		}
	}
	walk(d.Panels)
	return d.UID, errs
}

// checkDatasource: a panel or variable queries the datasource variable,
// not a Prometheus of the author's.
func checkDatasource(ds *datasource, variables map[string]bool) error {
	if ds == nil {
		return fmt.Errorf("no datasource")
	}
	if m := variableRef.FindStringSubmatch(ds.UID); m != nil && m[0] == ds.UID && variables[m[1]+m[2]+m[3]] {
		return nil
	}
	return fmt.Errorf("datasource uid %q is not a datasource variable", ds.UID)
}

// labelValues is the query of a label_values variable.
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*(\w+)\)$`)

// checkVariableQuery parses a query variable's label_values(selector,
// label): the selector must be PromQL.
func checkVariableQuery(raw json.RawMessage, values map[string]string) error {
	var q struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &q); err != nil {
		// Older dashboards give the query as a plain string.
		if err := json.Unmarshal(raw, &q.Query); err != nil {
			return fmt.Errorf("query is neither a string nor an object: %s", raw)
		}
	}
	m := labelValues.FindStringSubmatch(strings.TrimSpace(q.Query))
	if m == nil {
		return fmt.Errorf("query %q is not label_values(selector, label)", q.Query)
	}
	return checkQuery(m[1], values)
}

// checkQuery fills in a query's variables and parses it.
func checkQuery(expr string, values map[string]string) error {
	if strings.TrimSpace(expr) == "" {
		return fmt.Errorf("empty query")
	}
	var undefined []string
	filled := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if v, ok := values[name]; ok {
			return v
		}
		if v, ok := builtins[name]; ok {
			return v
		}
		undefined = append(undefined, name)
		return ref
	})
	if len(undefined) > 0 {
		return fmt.Errorf("query %q uses undefined variables %v", expr, undefined)
	}
	if _, err := promql.ParseExpr(filled); err != nil {
		return fmt.Errorf("query %q does not parse: %w", expr, err)
	}
	return nil
}
