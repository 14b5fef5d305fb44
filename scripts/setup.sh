#!/usr/bin/env bash
# Installs what RingKernel builds with, from Debian/Ubuntu packages, if it is
# missing (apt-get; run as root or with sudo available). Also checks for the
# CUDA toolkit (NVRTC and cuda.h), which does not come from apt here.
set -euo pipefail
packages=(cmake ninja-build g++ libclang-16-dev libabsl-dev libgtest-dev libgmock-dev
          nlohmann-json3-dev libxxhash-dev python3 python3-numpy python3-scipy python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=''
  [ "$(id -u)" -ne 0 ] && sudo='sudo'
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/nvrtc.h" ] || [ ! -f "$cuda/include/cuda.h" ]; then
  echo "setup: no CUDA toolkit at $cuda (RingKernel needs its NVRTC and cuda.h; set CUDA_HOME)" >&2
  exit 2
fi
echo "setup: dependencies present (CUDA toolkit at $cuda)"
