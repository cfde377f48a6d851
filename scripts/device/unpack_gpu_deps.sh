# Sourced from the repo root by the device scripts: unpack_gpu_deps DIR unpacks the carried Debian
# packages (.gpu-deps/*.deb, scripts/device/fetch_gpu_deps.sh) into DIR unless they are there.
# NOTES: into a private folder first, then renamed: a script started beside another one (a build
# beside prebuilt CLIs) once found DIR half unpacked and its CLIs could not load their libraries.
unpack_gpu_deps() {
  local deps=$1 part="$1.part.$$" f
  [ -d "$deps/usr" ] && return 0
  rm -rf "$part"
  for f in .gpu-deps/*.deb; do dpkg -x "$f" "$part" || { rm -rf "$part"; return 1; }; done
  mv -T "$part" "$deps" 2> /dev/null || rm -rf "$part"  # another script got there first
  [ -d "$deps/usr" ]
}
