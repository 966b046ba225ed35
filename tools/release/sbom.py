#!/usr/bin/env python3
"""sbom.py SBOM DIST VERSION ARCH: completes cyclonedx-gomod's SBOM of one
release binary, in place.

cyclonedx-gomod's bin mode reads the binary's build information. Two things
in it are the Collector Builder's, not the product's: the main module is
the builder's generated one (go.opentelemetry.io/collector/cmd/builder, no
version), and this project's own module, which the builder's sources take
through `replace ... => ../`, is left out as a local directory. This names
the binary's component DIST at VERSION and adds the project's module, so
that the SBOM lists the code the release is mostly made of.
"""
import json
import sys


def main():
    path, dist, version, arch = sys.argv[1:5]
    with open(path) as f:
        bom = json.load(f)
    purl = f"pkg:golang/github.com/otelcol-gpu/otelcol-gpu@v{version}?goarch={arch}&goos=linux&type=module"
    main_ref = bom["metadata"]["component"]["bom-ref"]
    # Its purl would name the builder's module, which is no package anyone
    # can fetch: the component is the binary, named and versioned.
    bom["metadata"]["component"].pop("purl", None)
    bom["metadata"]["component"].update({
        "name": dist,
        "version": version,
        "licenses": [{"license": {"id": "Apache-2.0"}}],
    })
    own = {
        "bom-ref": purl,
        "type": "library",
        "name": "github.com/otelcol-gpu/otelcol-gpu",
        "version": "v" + version,
        "scope": "required",
        "purl": purl,
        "licenses": [{"license": {"id": "Apache-2.0"}}],
    }
    components = bom.setdefault("components", [])
    if any(c.get("name") == own["name"] for c in components):
        sys.exit(f"sbom.py: {path} already lists {own['name']}: cyclonedx-gomod changed; check this script")
    components.append(own)
    for dep in bom.setdefault("dependencies", []):
        if dep.get("ref") == main_ref:
            dep.setdefault("dependsOn", []).append(purl)
    with open(path, "w") as f:
        json.dump(bom, f, indent=2)
        f.write("\n")
    print(f"sbom: {path}: {dist} {version}, {len(components)} modules")


if __name__ == "__main__":
    main()
