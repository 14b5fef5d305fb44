struct RK_ACTOR A
n(){struct{struct RK_ACTOR A.;struct RK_ACTOR A