int foo_value(void) { return 42; }
