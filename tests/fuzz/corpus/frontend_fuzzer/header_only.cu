// file: only.h
struct Lonely { int x; };
