s_branch 0
