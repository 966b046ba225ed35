#!/usr/bin/env bash
# package.sh NAME ARCH BINARY OUTDIR: the .deb and the .rpm of one built
# binary of otelcol-gpu or otelcol-gpu-agent (distributions/otelcol-gpu/
# packaging/nfpm.yaml), written to OUTDIR. PKG_VERSION names the version;
# PKG_FORMATS (default "deb rpm") which packages; NFPM the nFPM binary.
# Run from the repository root. It builds nothing: make deb packages the
# binary make build made, make release the ones it cross-built.
set -euo pipefail
name=$1 arch=$2 bin=$3 out=$4
: "${PKG_VERSION:?PKG_VERSION must name the version}"
: "${NFPM:?NFPM must name the nFPM binary}"
case $name in otelcol-gpu|otelcol-gpu-agent) ;; *) echo "package.sh: unknown package $name (otelcol-gpu or otelcol-gpu-agent)" >&2; exit 2 ;; esac
case $arch in amd64|arm64) ;; *) echo "package.sh: unknown architecture $arch (amd64 or arm64)" >&2; exit 2 ;; esac
[ -x "$bin" ] || { echo "package.sh: $bin is not an executable: build it first" >&2; exit 2; }

# The newest glibc symbol version the binary asks for is the least glibc
# the package depends on (readelf reads any architecture's ELF).
glibc=$(readelf --dyn-syms -W "$bin" | grep -o '@GLIBC_[0-9][0-9.]*' | sed 's/@GLIBC_//' | sort -uV | tail -1)
[ -n "$glibc" ] || { echo "package.sh: $bin names no glibc symbol version: is it a cgo binary?" >&2; exit 2; }

mkdir -p "$out"
# The maintainer scripts name the package's own unit.
scripts=$out/scripts-$name
mkdir -p "$scripts"
for s in preinstall postinstall preremove postremove; do
	sed "s/@NAME@/$name/g" "distributions/otelcol-gpu/packaging/scripts/$s.sh" > "$scripts/$s.sh"
	chmod 0755 "$scripts/$s.sh"
done

# nFPM expands the environment in a few fields only (not in contents):
# the description is filled in here, every ${PKG_...} in it.
config=$out/nfpm-$name-$arch.yaml
sed -e "s#\${PKG_NAME}#$name#g" -e "s#\${PKG_ARCH}#$arch#g" -e "s#\${PKG_VERSION}#$PKG_VERSION#g" \
	-e "s#\${PKG_BIN}#$bin#g" -e "s#\${PKG_SCRIPTS}#$scripts#g" -e "s#\${PKG_GLIBC}#$glibc#g" \
	distributions/otelcol-gpu/packaging/nfpm.yaml > "$config"
if grep -n '\${PKG_' "$config" >&2; then echo "package.sh: $config: a \${PKG_...} above is not one package.sh sets" >&2; exit 2; fi
for format in ${PKG_FORMATS:-deb rpm}; do
	"$NFPM" package --config "$config" --packager "$format" --target "$out/"
done
rm -f "$config"
