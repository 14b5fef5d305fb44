// Copyright 2026 The RingKernel Authors.
int main() { return 2; }
