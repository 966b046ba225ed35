#!/usr/bin/env bash
# release.sh: every release artifact in _dist/ (make release; docs/release.md):
# otelcol-gpu and otelcol-gpu-agent for linux/amd64 and linux/arm64 (cgo,
# arm64 through Debian's aarch64-linux-gnu-gcc), each as a .tar.gz, a .deb
# and an .rpm, a CycloneDX SBOM per binary, and sha256 checksums of them
# all, and the image of each binary as a tarball (docker load, podman load,
# crane push), named as the Helm chart's default image. The version is VERSION (the builder's dist.version, with +git.<commit>
# outside a release tag), stamped into --version through the builder's
# generated main. Run from the repository root; BUILDER, NFPM, CYCLONEDX
# name the pinned tools, RELEASE_ARCHES and RELEASE_DISTS narrow the matrix.
set -euo pipefail
: "${VERSION:?VERSION must name the version}"
: "${BUILDER:?}" "${NFPM:?}" "${CYCLONEDX:?}" "${OCIIMAGE:?}"
dists=${RELEASE_DISTS:-otelcol-gpu otelcol-gpu-agent}
arches=${RELEASE_ARCHES:-amd64 arm64}
out=_dist
rm -rf "$out" && mkdir -p "$out"

# An image tag takes no "+": 0.1.0+git.abc is tagged 0.1.0-git.abc.
tag=${VERSION//+/-}
libroot_for() {
	case $1 in
	amd64) echo / ;;
	arm64) echo /usr/aarch64-linux-gnu ;;
	esac
}
cc_for() {
	case $1 in
	amd64) echo gcc ;;
	arm64) echo aarch64-linux-gnu-gcc ;;
	esac
}
for arch in $arches; do
	cc=$(cc_for "$arch")
	command -v "$cc" >/dev/null || { echo "release.sh: no $cc for linux/$arch: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross" >&2; exit 2; }
done

start=$(date +%s)
for dist in $dists; do
	case $dist in
	otelcol-gpu) manifest=builder-config.yaml ;;
	otelcol-gpu-agent) manifest=builder-config-agent.yaml ;;
	*) echo "release.sh: unknown distribution $dist" >&2; exit 2 ;;
	esac
	# The builder writes the version into the generated main as a literal:
	# generate from a copy of the manifest that names this version, in a
	# directory of its own one level down (the manifest's replace of this
	# module is ../).
	src=_build-release-$dist
	sed -e "s#^  output_path: .*#  output_path: ./$src#" -e "s#^  version: .*#  version: $VERSION#" "$manifest" > "$out/builder-$dist.yaml"
	GOFLAGS="-mod=mod -e" "$BUILDER" --config "$out/builder-$dist.yaml" --skip-compilation
	for arch in $arches; do
		dir=$out/${dist}_${VERSION}_linux_$arch
		mkdir -p "$dir"
		echo "release: $dist linux/$arch"
		(cd "$src" && CGO_ENABLED=1 GOOS=linux GOARCH=$arch CC=$(cc_for "$arch") \
			go build -trimpath -ldflags "-s -w" -o "../$dir/$dist" .)
		cp LICENSE "$dir/"
		cp "distributions/otelcol-gpu/$dist.service" "distributions/otelcol-gpu/packaging/$dist/config.yaml" \
			"distributions/otelcol-gpu/packaging/$dist/$dist.conf" "$dir/"
		tar -C "$out" -czf "$dir.tar.gz" "$(basename "$dir")"
		PKG_VERSION=$VERSION tools/release/package.sh "$dist" "$arch" "$dir/$dist" "$out"
		# The SBOM of what this binary was built from: every module its
		# build information names (go version -m), with their licences.
		# cyclonedx-gomod leaves out a module replaced by a local directory,
		# which this project's own code is in the builder's sources, and
		# names the binary after the builder's generated module: sbom.py
		# names it, with its version, and adds this project's module.
		sbom=$out/${dist}_${VERSION}_linux_$arch.cdx.json
		"$CYCLONEDX" bin -json -licenses -output "$sbom" "$dir/$dist" 2> "$out/cyclonedx-$dist-$arch.log" ||
			{ cat "$out/cyclonedx-$dist-$arch.log" >&2; exit 1; }
		python3 tools/release/sbom.py "$sbom" "$dist" "$VERSION" "$arch"
		SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) "$OCIIMAGE" -binary "$dir/$dist" -name "$dist" -arch "$arch" \
			-libroot "$(libroot_for "$arch")" -config "distributions/otelcol-gpu/packaging/$dist/config.yaml" \
			-version "$VERSION" -tag "ghcr.io/otelcol-gpu/$dist:$tag" -out "$out/${dist}_${VERSION}_linux_$arch.image.tar"
		rm -rf "$dir"
	done
done
rm -rf "$out"/scripts-* "$out"/builder-*.yaml "$out"/cyclonedx-*.log
# What was built runs: each package's contents listed, and each amd64
# image's binary started from the image's own files (a chroot), which
# proves the libraries it carries are the ones the binary needs.
# (The listing is read whole: grep -q stops reading at its first match, and
# pipefail would take the lister's broken pipe for a failure.)
for p in "$out"/*.deb; do
	listing=$(dpkg-deb --contents "$p")
	grep -q ' \./usr/bin/otelcol-gpu' <<<"$listing" || { echo "release.sh: $p has no binary" >&2; exit 1; }
done
if command -v rpm >/dev/null; then
	for p in "$out"/*.rpm; do
		listing=$(rpm -qpl "$p")
		grep -q '^/usr/bin/otelcol-gpu' <<<"$listing" || { echo "release.sh: $p has no binary" >&2; exit 1; }
	done
fi
if [ "$(id -u)" = 0 ]; then
	for img in "$out"/*_linux_amd64.image.tar; do
		root=$(mktemp -d) unpacked=$(mktemp -d)
		tar -xf "$img" -C "$unpacked"
		for layer in "$unpacked"/*.tar.gz; do tar -xzf "$layer" -C "$root"; done
		chmod 0755 "$root" # mktemp's 0700 would keep user 10001 out of /
		name=$(basename "$img" | sed 's/_.*//')
		said=$(chroot --userspec=10001:10001 "$root" "/usr/bin/$name" --version) ||
			{ echo "release.sh: $img: its binary does not start from the image's own files" >&2; exit 1; }
		[ "$said" = "$name version $VERSION" ] ||
			{ echo "release.sh: $img: --version says \"$said\", not \"$name version $VERSION\"" >&2; exit 1; }
		echo "release: $(basename "$img"): $said, started from the image's files as user 10001"
		rm -rf "$root" "$unpacked"
	done
fi
(cd "$out" && sha256sum -- *.tar.gz *.deb *.rpm *.cdx.json *.image.tar > checksums.txt)
echo "release: $(ls "$out" | wc -l) files in $out in $(( $(date +%s) - start )) s"
ls -l "$out"
