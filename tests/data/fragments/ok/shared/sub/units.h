#pragma once

struct Cents {
  long long value;
};
