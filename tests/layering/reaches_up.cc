// Compiled only by the layering tests (tests/CMakeLists.txt), as a file of
// the library it is linked to: the header it includes belongs to a layer that
// library must not see, so compiling it must fail on that #include.
#include FK_FORBIDDEN_HEADER

int main() { return 0; }
