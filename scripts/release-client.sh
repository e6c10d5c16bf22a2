#!/usr/bin/env bash
# Tags a release of the storelinkclient module as storelinkclient/vX.Y.Z
# after checking that other teams can build against it (ADR 0011). It never
# pushes: the last line prints the command that publishes the tag.
#
# Usage: scripts/release-client.sh VERSION APIDIFF
#   VERSION  vX.Y.Z (or vX.Y.Z-rc.N)
#   APIDIFF  path to the pinned apidiff binary (make builds it from tools/)
set -euo pipefail

version=${1:-}
apidiff=${2:-}
module=github.com/korral/storelink/storelinkclient
dir=storelinkclient
prefix=$dir/

fail() { echo "release-client: $*" >&2; exit 1; }

[[ $version =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
	fail "VERSION=$version is not a semantic version like v1.2.3: run 'make release-client VERSION=v1.2.3'"
major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]} patch=${BASH_REMATCH[3]}
[[ -x $apidiff ]] || fail "apidiff not found at '$apidiff'"
cd "$(git rev-parse --show-toplevel)"
tag=$prefix$version

[[ -z $(git status --porcelain) ]] || fail "the working tree has uncommitted changes: commit or stash them, a tag names a commit"
! git rev-parse -q --verify "refs/tags/$tag" >/dev/null || fail "tag $tag already exists"
(( major < 2 )) || fail "$version: a major version 2 or above needs the module path to end in /v$major first"

# The previous release: the highest storelinkclient/v* tag below this one.
prev=$(git tag --list "${prefix}v*" --sort=-v:refname | sed "s|^$prefix||" |
	while read -r v; do [[ $(printf '%s\n%s\n' "$v" "$version" | sort -V | tail -n1) == "$version" ]] && echo "$v" && break; done || true)
if [[ -z $prev ]]; then
	echo "== API compatibility: skipped, no earlier ${prefix}v* tag (first release)"
else
	echo "== API compatibility against $prefix$prev (apidiff)"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	git archive "$prefix$prev" "$dir" | tar -x -C "$work"
	(cd "$work/$dir" && GOWORK=off "$apidiff" -m -w "$work/prev.api" "$module")
	report=$(cd "$dir" && GOWORK=off "$apidiff" -m "$work/prev.api" "$module")
	[[ -z $report ]] || echo "$report"
	pmajor=${prev#v}; pmajor=${pmajor%%.*}
	pminor=${prev#v*.}; pminor=${pminor%%.*}
	if grep -q '^Incompatible changes:' <<<"$report"; then
		if (( major == 0 && minor == pminor )) || (( major >= 1 && major == pmajor )); then
			fail "$version breaks the API of $prev (above); an incompatible change needs a new major version (a new minor while at v0)"
		fi
	elif [[ -n $report ]] && (( major == pmajor && minor == pminor )); then
		fail "$version adds API to $prev (above); additions need a new minor version, not a patch"
	fi
fi

echo "== $module $version: the module alone (GOWORK=off), as an importer builds it"
(
	cd "$dir"
	! GOWORK=off go mod edit -json | grep -q '"Replace": \[' || fail "$dir/go.mod has replace directives; importers would ignore them"
	GOWORK=off go mod tidy -diff || fail "$dir/go.mod is not tidy: run 'go mod tidy' in $dir"
	GOWORK=off go build ./...
	GOWORK=off go vet ./...
	GOWORK=off go test -count=1 ./...
)

git tag -a "$tag" -m "storelinkclient $version"
echo "== tagged $tag at $(git rev-parse --short HEAD); publish it with: git push origin $tag"
