package dcgmbackend

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ParseEndpoint turns an nv-hostengine endpoint into go-dcgm's address and
// whether it is a unix socket. It accepts host:port, unix:///path and a bare
// absolute socket path.
func ParseEndpoint(endpoint string) (address string, unix bool, err error) {
	switch {
	case endpoint == "":
		return "", false, errors.New("is empty; want host:port or unix:///path/to/socket")
	case strings.HasPrefix(endpoint, "unix://"):
		p := strings.TrimPrefix(endpoint, "unix://")
		if !strings.HasPrefix(p, "/") {
			return "", false, fmt.Errorf("%q: a unix socket path must be absolute", endpoint)
		}
		return p, true, nil
	case strings.HasPrefix(endpoint, "/"):
		return endpoint, true, nil
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("%q is not host:port or unix:///path: %w", endpoint, err)
	}
	if host == "" {
		return "", false, fmt.Errorf("%q has no host", endpoint)
	}
	var p int
	if _, err := fmt.Sscanf(port, "%d", &p); err != nil || p <= 0 || p > 65535 || strconv.Itoa(p) != port {
		return "", false, fmt.Errorf("%q has an invalid port %q", endpoint, port)
	}
	return endpoint, false, nil
}
