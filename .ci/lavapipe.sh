#!/usr/bin/env bash
# Install lavapipe (Mesa's CPU Vulkan driver, with VK_NV_cooperative_matrix2 from Mesa 26.1) and the
# Khronos validation layer (new enough to know these extensions; Debian 12's 1.3.239 is not) into
# PREFIX and write PREFIX/run, the launcher: `PREFIX/run python -m ctsgen doctor`.
#
# Debian 12's own Mesa (22.3) has none of these extensions and Mesa 26 needs a newer glibc than
# Debian 12's, so Debian sid's packages (mesa-vulkan-drivers, libvulkan1, vulkan-tools,
# vulkan-validationlayers and what they depend on, glibc included; and libvulkan-dev alone, for
# headers that know these extensions in PREFIX/usr/include, which docs/repros/*/run.c builds with) are unpacked into PREFIX with dpkg-deb, never installed: a private
# sources list and an empty dpkg status, the archive taken from this machine's own apt
# configuration. The launcher starts a program through PREFIX's own dynamic loader, so only that
# program sees the newer glibc, and exports CTSGEN_WORKER_LAUNCHER (ctsgen's supervised worker is
# started through it too), VK_DRIVER_FILES (a copy of lvp_icd.json with an absolute path) and
# VK_ADD_LAYER_PATH (the validation layer, for `ctsgen run --validation`).
# A prefix rather than a chroot: no root, no mount, nothing of the machine's changes, and the
# program runs in the machine's own file system (its virtual environment, its checkout).
#
# Usage: .ci/lavapipe.sh PREFIX      (again with the same PREFIX: nothing to do, exit 0)
#        .ci/lavapipe.sh --archive   (print the archive URI it would use; apt's directory: $APT_ETC,
#                                     default /etc/apt)
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX | --archive" >&2
    exit 2
fi
etc=${APT_ETC:-/etc/apt}
layer_json=usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
headers=usr/include/vulkan/vulkan_core.h
if [ "$1" != --archive ] && [ -x "$1/run" ] && [ -f "$1/lvp_icd.json" ] && [ -f "$1/$layer_json" ] \
        && [ -f "$1/$headers" ]; then
    exit 0
fi

# The machine's Debian archive: the first URI of a deb822 .sources file, else of a one-line
# `deb [options] URI suite components` entry; security archives are not the main one.
archive_uri() {
    local f
    for f in "$etc"/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f"
    done
    for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                           if ($i !~ /security/) { print $i; exit } }' "$f"
    done
}
uri=$(archive_uri | head -n 1)
if [ -z "$uri" ]; then
    echo "lavapipe.sh: no Debian archive in $etc/sources.list or $etc/sources.list.d -> configure apt" >&2
    exit 1
fi
if [ "$1" = --archive ]; then
    echo "$uri"
    exit 0
fi
prefix=$(realpath -m "$1")
lib="$prefix/usr/lib/x86_64-linux-gnu"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri sid main" > sources.list
touch status
mkdir -p lists/partial cache/archives/partial debs
apt=(apt-get -qq -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o "Dir::State::Lists=$work/lists" -o "Dir::State::Status=$work/status" -o "Dir::Cache=$work/cache"
     -o APT::Architecture=amd64 -o "APT::Sandbox::User=$(id -un)")
if ! "${apt[@]}" update >apt.log 2>&1; then
    echo "lavapipe.sh: apt-get update of $uri sid failed:" >&2
    cat apt.log >&2
    exit 1
fi
packages=$("${apt[@]}" install --print-uris mesa-vulkan-drivers libvulkan1 vulkan-tools \
           vulkan-validationlayers 2>apt.log \
           | awk '{print $2}' | sed 's/_.*//') || { cat apt.log >&2; exit 1; }
if [ -z "$packages" ]; then
    echo "lavapipe.sh: apt resolved no packages for mesa-vulkan-drivers from $uri sid:" >&2
    cat apt.log >&2
    exit 1
fi
packages="$packages libvulkan-dev"  # its headers only: not its python3 dependency
# shellcheck disable=SC2086 # one package name a word
(cd debs && "${apt[@]}" download $packages) || { echo "lavapipe.sh: apt-get download failed" >&2; exit 1; }
mkdir -p "$prefix"
for deb in debs/*.deb; do
    dpkg-deb -x "$deb" "$prefix"
done
sed "s|\"library_path\": *\"[^\"]*\"|\"library_path\": \"$lib/libvulkan_lvp.so\"|" \
    "$prefix/usr/share/vulkan/icd.d/lvp_icd.json" > "$prefix/lvp_icd.json"

# --library-path names the prefix only: the machine's own libraries are the loader's default
# directories. Naming /usr/lib/x86_64-linux-gnu there too would outrank a program's RUNPATH (a
# Python built with its own libpython would load the system's libpython under its own stdlib).
# The loader does not search PATH: a bare program name is resolved here.
cat > "$prefix/run.new" <<EOF
#!/bin/sh
# lavapipe from $prefix (written by .ci/lavapipe.sh): run PROGRAM [ARGS...] through the prefix's loader.
export VK_DRIVER_FILES="$prefix/lvp_icd.json" VK_ICD_FILENAMES="$prefix/lvp_icd.json"
export VK_ADD_LAYER_PATH="\${VK_ADD_LAYER_PATH:-$prefix/usr/share/vulkan/explicit_layer.d}"
export CTSGEN_WORKER_LAUNCHER="$prefix/run"
program=\$1
case \$program in */*) ;; *) program=\$(command -v "\$1") || { echo "run: \$1: not found" >&2; exit 127; } ;; esac
shift
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "\$program" "\$@"
EOF
chmod +x "$prefix/run.new"
mv "$prefix/run.new" "$prefix/run"
echo "lavapipe: $(ls "$work"/debs | wc -l) packages into $prefix, launcher $prefix/run"
