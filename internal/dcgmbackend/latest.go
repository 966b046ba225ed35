package dcgmbackend

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// DCGM's ABI for the one call made here, as DCGM's dcgm_structs.h and
// dcgm_agent.h declare it. DCGM versions its structs by size, so the
// layout is stable; the stand-in DCGM library, compiled against DCGM's own
// headers, fills these buffers in the tests and would expose a mismatch.
#define OTG_DCGM_ST_OK 0
#define OTG_DCGM_FT_DOUBLE 'd'
#define OTG_DCGM_FT_INT64 'i'

typedef struct {
	unsigned int entityGroupId;
	unsigned int entityId;
} otg_entity;

typedef struct {
	unsigned int version;
	unsigned int entityGroupId;
	unsigned int entityId;
	unsigned short fieldId;
	unsigned short fieldType;
	int status;
	unsigned int unused;
	int64_t ts;
	union {
		int64_t i64;
		double dbl;
		char str[256];
		char blob[4096];
	} value;
} otg_value;

typedef int (*otg_latest_fn)(uintptr_t, otg_entity *, unsigned int, unsigned short *, unsigned int, unsigned int, otg_value *);

typedef const char *(*otg_error_fn)(int);

static otg_latest_fn otg_latest;
static otg_error_fn otg_error;

// otg_resolve finds dcgmEntitiesGetLatestValues in the DCGM library that
// go-dcgm loaded (with RTLD_GLOBAL), anew after every connection: go-dcgm
// unloads the library when it shuts down. It returns 0 when it is not there.
static int otg_resolve(void) {
	otg_latest = (otg_latest_fn)dlsym(RTLD_DEFAULT, "dcgmEntitiesGetLatestValues");
	otg_error = (otg_error_fn)dlsym(RTLD_DEFAULT, "errorString");
	return otg_latest != 0;
}

static const char *otg_error_string(int ret) {
	const char *s = otg_error ? otg_error(ret) : 0;
	return s ? s : "unknown DCGM error";
}

static int otg_get_latest(uintptr_t h, otg_entity *e, unsigned int ne, unsigned short *f, unsigned int nf, otg_value *out) {
	return otg_latest(h, e, ne, f, nf, 0, out);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// goDCGMHandle is go-dcgm's connection handle. go-dcgm keeps it private
// and reads values only by copying every 4 KiB dcgmFieldValue_v2 into a
// fresh Go slice (about 10 MB of copies and garbage per scrape at 32
// GPUs); reading through the same connection into a buffer reused from
// scrape to scrape needs the handle. Its layout is one dcgmHandle_t
// (uintptr_t); the pinned go-dcgm version (go.mod) defines it so.
//
//go:linkname goDCGMHandle github.com/NVIDIA/go-dcgm/pkg/dcgm.handle
var goDCGMHandle struct{ h uintptr }

// maxValuesPerCall bounds one read's buffer to 256 values (1 MiB):
// larger reads are split by entity.
const maxValuesPerCall = 256

// latestReader reads the newest values of a fixed set of entities and
// fields with dcgmEntitiesGetLatestValues, into C memory that it reuses.
type latestReader struct {
	entities []C.otg_entity
	ids      []C.ushort
	fields   []f.Field // catalog field of each ID, in the order of ids
	index    []int     // index into the backend's entities of each entity
	buf      *C.otg_value
	perCall  int // entities per call
}

// value is one value as the backend needs it.
type latestValue struct {
	entity int // index into the backend's entities
	field  f.Field
	ts     int64 // microseconds since 1970
	x      float64
}

func newLatestReader(pairs []dcgm.GroupEntityPair, index []int, ids []dcgm.Short) (*latestReader, error) {
	if len(pairs) == 0 || len(ids) == 0 {
		return &latestReader{}, nil
	}
	if C.otg_resolve() == 0 {
		return nil, errors.New("DCGM library lacks dcgmEntitiesGetLatestValues")
	}
	r := &latestReader{index: index}
	for _, p := range pairs {
		r.entities = append(r.entities, C.otg_entity{entityGroupId: C.uint(p.EntityGroupId), entityId: C.uint(p.EntityId)})
	}
	for _, id := range ids {
		field, ok := f.ByID(uint16(id))
		if !ok {
			return nil, fmt.Errorf("DCGM field %d is not in the catalog", id)
		}
		r.ids = append(r.ids, C.ushort(id))
		r.fields = append(r.fields, field)
	}
	r.perCall = max(1, maxValuesPerCall/len(ids))
	n := min(r.perCall, len(pairs)) * len(ids)
	r.buf = (*C.otg_value)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.otg_value{}))))
	if r.buf == nil {
		return nil, errors.New("out of memory for DCGM values")
	}
	return r, nil
}

// reads reports whether r reads exactly these entities and fields, so that
// a reader made before the backend rediscovered its GPUs is not reused.
func (r *latestReader) reads(pairs []dcgm.GroupEntityPair, ids []dcgm.Short) bool {
	if r == nil {
		return false
	}
	if len(pairs) == 0 || len(ids) == 0 {
		return len(r.entities) == 0
	}
	if len(r.entities) != len(pairs) || len(r.ids) != len(ids) {
		return false
	}
	for i, p := range pairs {
		if uint(r.entities[i].entityGroupId) != uint(p.EntityGroupId) || uint(r.entities[i].entityId) != p.EntityId {
			return false
		}
	}
	for i, id := range ids {
		if uint16(r.ids[i]) != uint16(id) {
			return false
		}
	}
	return true
}

// read calls fn for every present, numeric value not older than oldest
// (microseconds since 1970). DCGM's blank values (no data) are left out.
func (r *latestReader) read(oldest int64, fn func(latestValue)) error {
	if len(r.entities) == 0 {
		return nil
	}
	h := C.uintptr_t(goDCGMHandle.h)
	nf := len(r.ids)
	for start := 0; start < len(r.entities); start += r.perCall {
		ne := min(r.perCall, len(r.entities)-start)
		ret := C.otg_get_latest(h, &r.entities[start], C.uint(ne), &r.ids[0], C.uint(nf), r.buf)
		if ret != C.OTG_DCGM_ST_OK {
			return fmt.Errorf("%s (DCGM return %d)", C.GoString(C.otg_error_string(ret)), int(ret))
		}
		vals := unsafe.Slice(r.buf, ne*nf)
		for i := range vals {
			v := &vals[i]
			if v.status != C.OTG_DCGM_ST_OK || int64(v.ts) < oldest {
				continue
			}
			// DCGM fills the buffer entity by entity, field by field.
			e, k := start+i/nf, i%nf
			if uint(v.entityId) != uint(r.entities[e].entityId) || v.fieldId != r.ids[k] {
				return fmt.Errorf("DCGM returned entity %d field %d where entity %d field %d was due",
					v.entityId, v.fieldId, r.entities[e].entityId, r.ids[k])
			}
			var x float64
			switch v.fieldType {
			case C.OTG_DCGM_FT_DOUBLE:
				x = *(*float64)(unsafe.Pointer(&v.value))
				if x >= dcgm.DCGM_FT_FP64_BLANK {
					continue
				}
			case C.OTG_DCGM_FT_INT64:
				n := *(*int64)(unsafe.Pointer(&v.value))
				if n >= dcgm.DCGM_FT_INT64_BLANK {
					continue
				}
				x = float64(n)
			default:
				continue
			}
			fn(latestValue{entity: r.index[e], field: r.fields[k], ts: int64(v.ts), x: x})
		}
	}
	return nil
}

func (r *latestReader) close() {
	if r != nil && r.buf != nil {
		C.free(unsafe.Pointer(r.buf))
		r.buf = nil
	}
}
