; struct S { int *p; int n; };  Struct copies become memcpy; library functions that copy or
; return their arguments.
%struct.S = type { ptr, i32 }

@g = dso_local global i32 0, align 4
@h = dso_local global i32 0, align 4
@init = dso_local constant %struct.S { ptr @h, i32 1 }, align 8

define dso_local ptr @f() {
entry:
  %a = alloca %struct.S, align 8
  %b = alloca %struct.S, align 8
  %c = alloca %struct.S, align 8
  %pa = getelementptr inbounds %struct.S, ptr %a, i32 0, i32 0
  store ptr @g, ptr %pa, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 8 %b, ptr align 8 %a, i64 16, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr align 8 %c, ptr align 8 @init, i64 16, i1 false)
  %pb = getelementptr inbounds %struct.S, ptr %b, i32 0, i32 0
  %v = load ptr, ptr %pb, align 8
  %d = call ptr @memmove(ptr noundef %c, ptr noundef %b, i64 noundef 16)
  %ch = call ptr @strchr(ptr noundef %d, i32 noundef 47)
  %end = alloca ptr, align 8
  %n = call i64 @strtol(ptr noundef %ch, ptr noundef %end, i32 noundef 10)
  ret ptr %v
}

declare void @llvm.memcpy.p0.p0.i64(ptr noalias nocapture writeonly, ptr noalias nocapture readonly, i64, i1 immarg)
declare ptr @memmove(ptr noundef, ptr noundef, i64 noundef)
declare ptr @strchr(ptr noundef, i32 noundef)
declare i64 @strtol(ptr noundef, ptr noundef, i32 noundef)
