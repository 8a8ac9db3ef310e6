// A kernel whose SGPR usage is pushed near the limit by an inline-asm clobber
// list: s10..s89, plus s90 with -DTO_S90, plus s90..s101 with -DTO_S101, plus
// s102..s105 with -DTO_S105 (gfx10+ only: 106 addressable SGPRs).
#if defined(TO_S105) && !defined(TO_S101)
#define TO_S101
#endif

__kernel void pressure(__global int *p) {
  __asm__ volatile(""
                   :
                   :
                   : "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17",
                     "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25",
                     "s26", "s27", "s28", "s29", "s30", "s31", "s32", "s33",
                     "s34", "s35", "s36", "s37", "s38", "s39", "s40", "s41",
                     "s42", "s43", "s44", "s45", "s46", "s47", "s48", "s49",
                     "s50", "s51", "s52", "s53", "s54", "s55", "s56", "s57",
                     "s58", "s59", "s60", "s61", "s62", "s63", "s64", "s65",
                     "s66", "s67", "s68", "s69", "s70", "s71", "s72", "s73",
                     "s74", "s75", "s76", "s77", "s78", "s79", "s80", "s81",
                     "s82", "s83", "s84", "s85", "s86", "s87", "s88", "s89"
#if defined(TO_S90) && !defined(TO_S101)
                     ,
                     "s90"
#endif
#ifdef TO_S101
                     ,
                     "s90", "s91", "s92", "s93", "s94", "s95", "s96", "s97",
                     "s98", "s99", "s100", "s101"
#endif
#ifdef TO_S105
                     ,
                     "s102", "s103", "s104", "s105"
#endif
  );
  p[__builtin_amdgcn_workitem_id_x()] = 1;
}
