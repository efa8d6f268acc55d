// statfs(2), which Swift's Glibc module leaves out: its f_type tells a kernel file system (/proc,
// /sys) from one that holds files.
#include <sys/vfs.h>
