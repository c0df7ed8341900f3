sdma.schedule @s ranks(%R) buffers(%b : ranks) {
affine.for %i0 = 0 to 1 {
affine.for %i1 = 0 to 1 {
affine.for %i2 = 0 to 1 {
affine.for %i3 = 0 to 1 {
affine.for %i4 = 0 to 1 {
affine.for %i5 = 0 to 1 {
affine.for %i6 = 0 to 1 {
affine.for %i7 = 0 to 1 {
affine.for %i8 = 0 to 1 {
affine.for %i9 = 0 to 1 {
affine.for %i10 = 0 to 1 {
affine.for %i11 = 0 to 1 {
affine.for %i12 = 0 to 1 {
affine.for %i13 = 0 to 1 {
affine.for %i14 = 0 to 1 {
affine.for %i15 = 0 to 1 {
affine.for %i16 = 0 to 1 {
affine.for %i17 = 0 to 1 {
affine.for %i18 = 0 to 1 {
affine.for %i19 = 0 to 1 {
affine.for %i20 = 0 to 1 {
affine.for %i21 = 0 to 1 {
affine.for %i22 = 0 to 1 {
affine.for %i23 = 0 to 1 {
affine.for %i24 = 0 to 1 {
affine.for %i25 = 0 to 1 {
affine.for %i26 = 0 to 1 {
affine.for %i27 = 0 to 1 {
affine.for %i28 = 0 to 1 {
affine.for %i29 = 0 to 1 {
affine.for %i30 = 0 to 1 {
affine.for %i31 = 0 to 1 {
affine.for %i32 = 0 to 1 {
affine.for %i33 = 0 to 1 {
affine.for %i34 = 0 to 1 {
affine.for %i35 = 0 to 1 {
affine.for %i36 = 0 to 1 {
affine.for %i37 = 0 to 1 {
affine.for %i38 = 0 to 1 {
affine.for %i39 = 0 to 1 {
affine.for %i40 = 0 to 1 {
affine.for %i41 = 0 to 1 {
affine.for %i42 = 0 to 1 {
affine.for %i43 = 0 to 1 {
affine.for %i44 = 0 to 1 {
affine.for %i45 = 0 to 1 {
affine.for %i46 = 0 to 1 {
affine.for %i47 = 0 to 1 {
affine.for %i48 = 0 to 1 {
affine.for %i49 = 0 to 1 {
affine.for %i50 = 0 to 1 {
affine.for %i51 = 0 to 1 {
affine.for %i52 = 0 to 1 {
affine.for %i53 = 0 to 1 {
affine.for %i54 = 0 to 1 {
affine.for %i55 = 0 to 1 {
affine.for %i56 = 0 to 1 {
affine.for %i57 = 0 to 1 {
affine.for %i58 = 0 to 1 {
affine.for %i59 = 0 to 1 {
affine.for %i60 = 0 to 1 {
affine.for %i61 = 0 to 1 {
affine.for %i62 = 0 to 1 {
affine.for %i63 = 0 to 1 {
affine.for %i64 = 0 to 1 {
affine.for %i65 = 0 to 1 {
affine.for %i66 = 0 to 1 {
affine.for %i67 = 0 to 1 {
affine.for %i68 = 0 to 1 {
affine.for %i69 = 0 to 1 {
affine.for %i70 = 0 to 1 {
affine.for %i71 = 0 to 1 {
affine.for %i72 = 0 to 1 {
affine.for %i73 = 0 to 1 {
affine.for %i74 = 0 to 1 {
affine.for %i75 = 0 to 1 {
affine.for %i76 = 0 to 1 {
affine.for %i77 = 0 to 1 {
affine.for %i78 = 0 to 1 {
affine.for %i79 = 0 to 1 {
affine.for %i80 = 0 to 1 {
affine.for %i81 = 0 to 1 {
affine.for %i82 = 0 to 1 {
affine.for %i83 = 0 to 1 {
affine.for %i84 = 0 to 1 {
affine.for %i85 = 0 to 1 {
affine.for %i86 = 0 to 1 {
affine.for %i87 = 0 to 1 {
affine.for %i88 = 0 to 1 {
affine.for %i89 = 0 to 1 {
affine.for %i90 = 0 to 1 {
affine.for %i91 = 0 to 1 {
affine.for %i92 = 0 to 1 {
affine.for %i93 = 0 to 1 {
affine.for %i94 = 0 to 1 {
affine.for %i95 = 0 to 1 {
affine.for %i96 = 0 to 1 {
affine.for %i97 = 0 to 1 {
affine.for %i98 = 0 to 1 {
affine.for %i99 = 0 to 1 {
affine.for %i100 = 0 to 1 {
affine.for %i101 = 0 to 1 {
affine.for %i102 = 0 to 1 {
affine.for %i103 = 0 to 1 {
affine.for %i104 = 0 to 1 {
affine.for %i105 = 0 to 1 {
affine.for %i106 = 0 to 1 {
affine.for %i107 = 0 to 1 {
affine.for %i108 = 0 to 1 {
affine.for %i109 = 0 to 1 {
affine.for %i110 = 0 to 1 {
affine.for %i111 = 0 to 1 {
affine.for %i112 = 0 to 1 {
affine.for %i113 = 0 to 1 {
affine.for %i114 = 0 to 1 {
affine.for %i115 = 0 to 1 {
affine.for %i116 = 0 to 1 {
affine.for %i117 = 0 to 1 {
affine.for %i118 = 0 to 1 {
affine.for %i119 = 0 to 1 {
affine.for %i120 = 0 to 1 {
affine.for %i121 = 0 to 1 {
affine.for %i122 = 0 to 1 {
affine.for %i123 = 0 to 1 {
affine.for %i124 = 0 to 1 {
affine.for %i125 = 0 to 1 {
affine.for %i126 = 0 to 1 {
affine.for %i127 = 0 to 1 {
affine.for %i128 = 0 to 1 {
affine.for %i129 = 0 to 1 {
affine.for %i130 = 0 to 1 {
affine.for %i131 = 0 to 1 {
affine.for %i132 = 0 to 1 {
affine.for %i133 = 0 to 1 {
affine.for %i134 = 0 to 1 {
affine.for %i135 = 0 to 1 {
affine.for %i136 = 0 to 1 {
affine.for %i137 = 0 to 1 {
affine.for %i138 = 0 to 1 {
affine.for %i139 = 0 to 1 {
affine.for %i140 = 0 to 1 {
affine.for %i141 = 0 to 1 {
affine.for %i142 = 0 to 1 {
affine.for %i143 = 0 to 1 {
affine.for %i144 = 0 to 1 {
affine.for %i145 = 0 to 1 {
affine.for %i146 = 0 to 1 {
affine.for %i147 = 0 to 1 {
affine.for %i148 = 0 to 1 {
affine.for %i149 = 0 to 1 {
affine.for %i150 = 0 to 1 {
affine.for %i151 = 0 to 1 {
affine.for %i152 = 0 to 1 {
affine.for %i153 = 0 to 1 {
affine.for %i154 = 0 to 1 {
affine.for %i155 = 0 to 1 {
affine.for %i156 = 0 to 1 {
affine.for %i157 = 0 to 1 {
affine.for %i158 = 0 to 1 {
affine.for %i159 = 0 to 1 {
affine.for %i160 = 0 to 1 {
affine.for %i161 = 0 to 1 {
affine.for %i162 = 0 to 1 {
affine.for %i163 = 0 to 1 {
affine.for %i164 = 0 to 1 {
affine.for %i165 = 0 to 1 {
affine.for %i166 = 0 to 1 {
affine.for %i167 = 0 to 1 {
affine.for %i168 = 0 to 1 {
affine.for %i169 = 0 to 1 {
affine.for %i170 = 0 to 1 {
affine.for %i171 = 0 to 1 {
affine.for %i172 = 0 to 1 {
affine.for %i173 = 0 to 1 {
affine.for %i174 = 0 to 1 {
affine.for %i175 = 0 to 1 {
affine.for %i176 = 0 to 1 {
affine.for %i177 = 0 to 1 {
affine.for %i178 = 0 to 1 {
affine.for %i179 = 0 to 1 {
affine.for %i180 = 0 to 1 {
affine.for %i181 = 0 to 1 {
affine.for %i182 = 0 to 1 {
affine.for %i183 = 0 to 1 {
affine.for %i184 = 0 to 1 {
affine.for %i185 = 0 to 1 {
affine.for %i186 = 0 to 1 {
affine.for %i187 = 0 to 1 {
affine.for %i188 = 0 to 1 {
affine.for %i189 = 0 to 1 {
affine.for %i190 = 0 to 1 {
affine.for %i191 = 0 to 1 {
affine.for %i192 = 0 to 1 {
affine.for %i193 = 0 to 1 {
affine.for %i194 = 0 to 1 {
affine.for %i195 = 0 to 1 {
affine.for %i196 = 0 to 1 {
affine.for %i197 = 0 to 1 {
affine.for %i198 = 0 to 1 {
affine.for %i199 = 0 to 1 {
sdma.fence on 0
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
