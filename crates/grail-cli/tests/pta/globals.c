/* Globals, their initializers, and pointers to them stored and loaded. */

int g1, g2, g3;
int *gp = &g1;
int **gpp = &gp;
int *table[2] = {&g1, &g2};
int *unused = &g3;

void retarget(void) {
    gp = &g2;
}

int main(void) {
    retarget();
    int *l = *gpp;
    int *m = table[1];
    return *l + *m;
}
