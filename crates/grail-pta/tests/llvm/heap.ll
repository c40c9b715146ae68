; Allocation sites: named by the line of their !dbg location where there is one, else numbered.
; struct node { struct node *next; };
; struct node *make(void) { struct node *n = malloc(8); n->next = malloc(8); return n; }
source_filename = "heap.c"

%struct.node = type { ptr }

define dso_local ptr @make() #0 !dbg !10 {
entry:
  %n = alloca ptr, align 8
  call void @llvm.dbg.declare(metadata ptr %n, metadata !14, metadata !DIExpression()), !dbg !16
  %call = call noalias ptr @malloc(i64 noundef 8) #2, !dbg !17
  store ptr %call, ptr %n, align 8, !dbg !16
  %call1 = call noalias ptr @malloc(i64 noundef 8) #2, !dbg !18
  %0 = load ptr, ptr %n, align 8, !dbg !18
  %next = getelementptr inbounds %struct.node, ptr %0, i32 0, i32 0, !dbg !18
  store ptr %call1, ptr %next, align 8, !dbg !18
  %1 = load ptr, ptr %n, align 8, !dbg !19
  ret ptr %1, !dbg !19
}

define dso_local i32 @main() #0 personality ptr @__gxx_personality_v0 {
entry:
  %p = call ptr @make()
  %q = call ptr @make()
  %c = call noalias ptr @calloc(i64 noundef 1, i64 noundef 8)
  %c2 = call noalias ptr @calloc(i64 noundef 1, i64 noundef 8)
  store ptr %p, ptr %c, align 8
  %r = call ptr @realloc(ptr noundef %c, i64 noundef 16)
  %s = call ptr @strdup(ptr noundef @.str)
  %pm = alloca ptr, align 8
  %rc = call i32 @posix_memalign(ptr noundef %pm, i64 noundef 16, i64 noundef 64)
  %n = invoke noalias noundef nonnull ptr @_Znwm(i64 noundef 16)
          to label %cont unwind label %lpad

cont:                                             ; preds = %entry
  call void @free(ptr noundef %c2)
  ret i32 0

lpad:                                             ; preds = %entry
  %lp = landingpad { ptr, i32 }
          cleanup
  resume { ptr, i32 } %lp
}

@.str = private unnamed_addr constant [4 x i8] c"abc\00", align 1

declare void @llvm.dbg.declare(metadata, metadata, metadata) #1
declare noalias ptr @malloc(i64 noundef) #2
declare noalias ptr @calloc(i64 noundef, i64 noundef) #2
declare ptr @realloc(ptr noundef, i64 noundef) #3
declare ptr @strdup(ptr noundef) #3
declare void @free(ptr noundef) #3
declare i32 @posix_memalign(ptr noundef, i64 noundef, i64 noundef) #3
declare noundef nonnull ptr @_Znwm(i64 noundef)
declare i32 @__gxx_personality_v0(...)

attributes #0 = { noinline nounwind optnone uwtable "frame-pointer"="all" }
attributes #1 = { nocallback nofree nosync nounwind readnone speculatable willreturn }
attributes #2 = { nounwind allocsize(0) "no-trapping-math"="true" }
attributes #3 = { nounwind "no-trapping-math"="true" }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "clang version 17.0.6", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "heap.c", directory: "/tmp", checksumkind: CSK_MD5, checksum: "0123456789abcdef0123456789abcdef")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!10 = distinct !DISubprogram(name: "make", scope: !1, file: !1, line: 3, type: !11, scopeLine: 3, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !13)
!11 = !DISubroutineType(types: !12)
!12 = !{null}
!13 = !{}
!14 = !DILocalVariable(name: "n", scope: !10, file: !1, line: 4, type: !15)
!15 = !DIBasicType(name: "long", size: 64, encoding: DW_ATE_signed)
!16 = !DILocation(line: 4, column: 16, scope: !10)
!17 = !DILocation(line: 4, column: 20, scope: !10)
!18 = !DILocation(line: 5, column: 13, scope: !10)
!19 = !DILocation(line: 6, column: 3, scope: !10)
