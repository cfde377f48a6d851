# Lays a kernel_ab version's files over the working tree and puts the tree's copies back after;
# sourced by kernel_ab.sh and prebuild_cli.sh from the repo root. A version is a folder
# .gpu-state/versions/VERSION mirroring the repo's paths (kernel_ab_version.sh makes one).
#   version_overlay VERSION SAVED   the tree's files the version replaces go to SAVED, then the
#                                   version's files over the tree
#   version_restore SAVED           the tree's copies back; files only the version has are removed
version_overlay() {
  local version=$1 saved=$2 file
  rm -rf "$saved" && mkdir -p "$saved" && : > "$saved.added"
  while IFS= read -r file; do
    if [ -e "$file" ]; then mkdir -p "$saved/$(dirname "$file")" && cp "$file" "$saved/$file"; else echo "$file" >> "$saved.added"; fi
    mkdir -p "$(dirname "$file")" && cp ".gpu-state/versions/$version/$file" "$file"
  done < <(cd ".gpu-state/versions/$version" && find . -type f)
}

version_restore() {
  local saved=$1 file
  cp -r "$saved/." .
  while IFS= read -r file; do rm -f "$file"; done < "$saved.added"
  rm -rf "$saved" "$saved.added"
}
