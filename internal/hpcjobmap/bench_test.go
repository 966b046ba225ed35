package hpcjobmap

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkRead reads a full node's mapping directory, eight GPUs with a
// job each and one shared by two, as the receiver does at every scrape.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	for i := range 8 {
		content := strconv.Itoa(4242+i) + "\n"
		if i == 7 {
			content += "5000\n"
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		m, err := Read(dir)
		if err != nil || len(m) != 8 {
			b.Fatal(m, err)
		}
	}
}
