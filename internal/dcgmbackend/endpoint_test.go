package dcgmbackend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseEndpoint(t *testing.T) {
	for _, tt := range []struct {
		in, addr string
		unix     bool
		err      string
	}{
		{in: "localhost:5555", addr: "localhost:5555"},
		{in: "10.0.0.7:5555", addr: "10.0.0.7:5555"},
		{in: "[::1]:5555", addr: "[::1]:5555"},
		{in: "unix:///tmp/dcgm.sock", addr: "/tmp/dcgm.sock", unix: true},
		{in: "/tmp/dcgm.sock", addr: "/tmp/dcgm.sock", unix: true},
		{in: "", err: "is empty"},
		{in: "localhost", err: "is not host:port or unix:///path"},
		{in: ":5555", err: "has no host"},
		{in: "localhost:70000", err: `has an invalid port "70000"`},
		{in: "localhost:05555", err: `has an invalid port "05555"`},
	} {
		addr, unix, err := ParseEndpoint(tt.in)
		if tt.err != "" {
			require.ErrorContains(t, err, tt.err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.addr, addr)
		require.Equal(t, tt.unix, unix)
	}
}
