package gpu

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMIGProfile(t *testing.T) {
	const a100x80 = 81920 << 20
	for _, c := range []struct {
		slices    int
		board, mb uint64
		want      string
	}{
		{1, a100x80, 9728, "1g.10gb"}, {2, a100x80, 19968, "2g.20gb"}, {3, a100x80, 40192, "3g.40gb"}, {7, a100x80, 80896, "7g.80gb"},
		{1, 40 << 30, 4864, "1g.5gb"}, {2, 40 << 30, 9856, "2g.10gb"}, {7, 40 << 30, 40192, "7g.40gb"},
		{1, 81559 << 20, 9728, "1g.10gb"},
		{1, 0, 4864, "1g.5gb"},
	} {
		require.Equal(t, c.want, MIGProfile(c.slices, c.board, c.mb), "%d MB of %d", c.mb, c.board)
	}
}
