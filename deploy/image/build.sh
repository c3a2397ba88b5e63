#!/usr/bin/env bash
# Builds placemat's image (deploy/image/Containerfile) with buildah, pulling nothing from a
# container registry: the image is FROM scratch and this script stages its whole content.
#
#   npm run image                      # npm run build, then this script
#   bash deploy/image/build.sh         # after npm run build; tags localhost/placemat:VERSION
#
# Environment:
#   PLACEMAT_IMAGE         the tag (default localhost/placemat:<package.json version>)
#   PLACEMAT_IMAGE_SOURCE  org.opencontainers.image.source (default: package.json's repository,
#                          else the git remote "origin"; left out when neither is known)
#   PLACEMAT_IMAGE_FORMAT  docker (the default: keeps the HEALTHCHECK) or oci
#   SOURCE_DATE_EPOCH      every file's time and the image's creation time (default: the last
#                          commit's time), so that the same inputs build the same layers
#   CONTAINERS_STORAGE_CONF, CONTAINERS_CONF: buildah's own (another storage root, vfs, ...)
#
# Prints the image's name on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

# The image's name; the Kubernetes manifests (deploy/kubernetes) name the same.
name=localhost/placemat
uid=10001

version=$(node -p "require('./package.json').version")
image=${PLACEMAT_IMAGE:-$name:$version}
for tool in buildah npm node ldd; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is needed (apt-get install buildah)" >&2; exit 1; }
done
[ -f dist/cli/index.cjs ] || { echo "build.sh: no dist/ here: run npm run build first (npm run image does both)" >&2; exit 1; }

revision=$(git rev-parse HEAD 2>/dev/null || true)
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
source_url=${PLACEMAT_IMAGE_SOURCE:-$(node -p "const r = require('./package.json').repository; (typeof r === 'string' ? r : r?.url) ?? ''")}
[ -n "$source_url" ] || source_url=$(git remote get-url origin 2>/dev/null || true)

stage=$(mktemp -d "${TMPDIR:-/tmp}/placemat-image.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/rootfs/usr/bin" "$stage/rootfs/etc" "$stage/data" "$stage/app"

# The package as npm publishes it, and its production dependencies from the lockfile (the native
# addon is compiled for the node below; the npm cache serves what it has).
npm pack --ignore-scripts --silent --pack-destination "$stage" >/dev/null
tar -xzf "$stage"/placemat-*.tgz -C "$stage/app" --strip-components=1 --no-same-owner
rm "$stage"/placemat-*.tgz
cp package-lock.json "$stage/app/"
(cd "$stage/app" && npm pkg delete scripts.prepare && npm ci --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error >&2)
# better-sqlite3's sources and objects are needed to compile it, not to load it.
sqlite_addon="$stage/app/node_modules/better-sqlite3"
find "$sqlite_addon/build" -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} +
find "$sqlite_addon/build/Release" -mindepth 1 ! -name better_sqlite3.node -exec rm -rf {} +
rm -rf "$sqlite_addon/deps" "$sqlite_addon/src"
cp "$here/healthcheck.mjs" "$stage/app/healthcheck.mjs"

# node, and every shared library that it or an addon loads, at the path the loader looks for it.
node_bin=$(readlink -f "$(command -v node)")
cp "$node_bin" "$stage/rootfs/usr/bin/node"
mapfile -t addons < <(find "$stage/app/node_modules" -name '*.node' -type f)
for lib in $(ldd "$node_bin" "${addons[@]}" | grep -o '/[^ ]*\.so[^ ]*' | sort -u); do
  mkdir -p "$stage/rootfs$(dirname "$lib")"
  cp -L "$lib" "$stage/rootfs$lib"
done

# Users for getpwuid (os.userInfo), hosts from /etc/hosts first, a /tmp anyone may write.
printf 'root:x:0:0:root:/root:/sbin/nologin\nplacemat:x:%s:%s:placemat:/var/lib/placemat:/sbin/nologin\n' "$uid" "$uid" >"$stage/rootfs/etc/passwd"
printf 'root:x:0:\nplacemat:x:%s:\n' "$uid" >"$stage/rootfs/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$stage/rootfs/etc/nsswitch.conf"
mkdir -m 1777 "$stage/rootfs/tmp"
chmod 0700 "$stage/data"
chmod -R u=rwX,go=rX "$stage/rootfs/usr" "$stage/rootfs/etc" "$stage/app"

labels=(--label "org.opencontainers.image.version=$version")
[ -n "$revision" ] && labels+=(--label "org.opencontainers.image.revision=$revision")
[ -n "$source_url" ] && labels+=(--label "org.opencontainers.image.source=$source_url")

# The docker format keeps the HEALTHCHECK (the OCI image config has no field for it), but buildah
# writes its build container's id and hostname into it; PLACEMAT_IMAGE_FORMAT=oci gives an image
# whose id, too, is the same on every build of the same inputs. --layers: node and its libraries,
# the data directory and the package each in a layer of its own (and cached for the next build).
buildah bud --quiet --layers --format "${PLACEMAT_IMAGE_FORMAT:-docker}" --timestamp "$epoch" --build-arg "VERSION=$version" "${labels[@]}" \
  -f "$here/Containerfile" -t "$image" "$stage" >&2
echo "$image"
